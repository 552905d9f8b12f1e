package talosfake

import (
	"slices"
	"testing"
)

func TestHcloudLinkNames(t *testing.T) {
	t.Parallel()

	names := func(o NodeOptions) (out []string) {
		for _, l := range hcloudLinks(o) {
			for _, a := range l.addrs {
				out = append(out, l.name+"="+a.String())
			}
		}

		return out
	}

	cases := []struct {
		name string
		o    NodeOptions
		want []string
	}{
		{"public and private", NodeOptions{ServerID: 1, PublicIP: "127.0.0.5", PrivateIP: "10.0.1.5"},
			[]string{"lo=127.0.0.1/8", "lo=::1/128", "eth0=127.0.0.5/32", "eth1=10.0.1.5/32"}},
		{"private only", NodeOptions{ServerID: 2, PrivateIP: "10.0.1.6"},
			[]string{"lo=127.0.0.1/8", "lo=::1/128", "eth0=10.0.1.6/32"}},
		{"public only", NodeOptions{ServerID: 3, PublicIP: "127.0.0.7"},
			[]string{"lo=127.0.0.1/8", "lo=::1/128", "eth0=127.0.0.7/32"}},
		// An IPv6-only server keeps its public NIC as eth0: the private NIC is eth1.
		{"public IPv6 only", NodeOptions{ServerID: 4, PublicIPv6: "2a01:4f8:1c1c:1::1", PrivateIP: "10.0.1.8"},
			[]string{"lo=127.0.0.1/8", "lo=::1/128", "eth0=2a01:4f8:1c1c:1::1/64", "eth1=10.0.1.8/32"}},
		{"dual stack", NodeOptions{ServerID: 5, PublicIP: "127.0.0.9", PublicIPv6: "2a01:4f8:1c1c:2::1", PrivateIP: "10.0.1.9"},
			[]string{"lo=127.0.0.1/8", "lo=::1/128", "eth0=127.0.0.9/32", "eth0=2a01:4f8:1c1c:2::1/64", "eth1=10.0.1.9/32"}},
	}

	for _, tc := range cases {
		if got := names(tc.o); !slices.Equal(got, tc.want) {
			t.Errorf("%s: links %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestSnapshotBlobShape(t *testing.T) {
	t.Parallel()

	n := &Node{opts: NodeOptions{ServerID: 7, Name: "cp", PrivateIP: "10.0.1.7"}}
	blob := snapshotBlob("cid", nil, n.started)

	if len(blob) != boltPageCount*boltPageSize+32 {
		t.Fatalf("snapshot is %d bytes", len(blob))
	}

	// bbolt meta page: magic at offset 16 of page 0 and page 1.
	for _, off := range []int{16, boltPageSize + 16} {
		if got := uint32(blob[off]) | uint32(blob[off+1])<<8 | uint32(blob[off+2])<<16 | uint32(blob[off+3])<<24; got != boltMagic {
			t.Fatalf("magic at %d = %#x", off, got)
		}
	}

	member := &etcdMember{serverID: 7, id: memberID(7, 1), name: "cp", host: n.etcdAddr()}
	if m := member.proto(); m.GetPeerUrls()[0] != "https://10.0.1.7:2380" || m.GetIsLearner() {
		t.Fatalf("member %+v", m)
	}
}
