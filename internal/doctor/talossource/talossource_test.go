package talossource

import (
	"context"
	"strings"
	"testing"
)

func TestVIPConfigIsWhatTheConfigsRender(t *testing.T) {
	s := New(nil, map[string]string{}, nil, VIP{Link: "eth1", Address: "10.0.1.100"})
	link, addr, err := s.VIPConfig(context.Background(), "cp-1")
	if err != nil || link != "eth1" || addr != "10.0.1.100" {
		t.Errorf("VIPConfig = %q, %q, %v; want eth1, 10.0.1.100", link, addr, err)
	}
	link, addr, _ = New(nil, nil, nil, VIP{}).VIPConfig(context.Background(), "cp-1")
	if link != "" || addr != "" {
		t.Errorf("without a VIP: %q, %q; want empty", link, addr)
	}
}

// TestUnreachableNodesSayWhy: a node with no public address is refused
// before any dial, and routes are proxied only when a control plane has one.
func TestUnreachableNodesSayWhy(t *testing.T) {
	s := New(nil, map[string]string{}, []string{"10.0.1.1"}, VIP{})
	defer s.Close()
	if _, err := s.Links(context.Background(), "worker-1"); err == nil || !strings.Contains(err.Error(), "worker-1 has no public address") {
		t.Errorf("Links: %v, want the node named and the reason", err)
	}
	if _, err := s.Routes(context.Background(), "worker-1"); err == nil || !strings.Contains(err.Error(), "no control plane has one to proxy through") {
		t.Errorf("Routes: %v, want the proxy reason", err)
	}
}
