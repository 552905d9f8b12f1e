package hcloudfake_test

import (
	"net/netip"
	"testing"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/hcloudfake"
)

// A server's IPv6 address is the first of its public /64, and an
// IPv6-only server has none in IPv4: the Talos fake gets both as they are.
func TestServerInfoPublicIPv6(t *testing.T) {
	e, _ := newPlainEnv(t)
	s := e.newServer(t, hcloud.ServerCreateOpts{Name: "v6only", PublicNet: &hcloud.ServerCreatePublicNet{EnableIPv4: false, EnableIPv6: true}})
	var info hcloudfake.ServerInfo
	for _, i := range e.fake.Servers() {
		if i.ID == s.ID {
			info = i
		}
	}
	if info.PublicIPv4 != "" {
		t.Errorf("IPv6-only server has IPv4 %q", info.PublicIPv4)
	}
	net := s.PublicNet.IPv6.Network
	addr, err := netip.ParseAddr(info.PublicIPv6)
	if err != nil || net == nil || !net.Contains(addr.AsSlice()) || addr.AsSlice()[15] != 1 {
		t.Errorf("PublicIPv6 = %q (%v), want ::1 of %v", info.PublicIPv6, err, net)
	}
}
