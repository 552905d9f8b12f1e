package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/state"
	"github.com/ohmytalos/ohmytalos/internal/talos/talosapi"
)

// inventory is how many resources of each kind the project must hold.
type inventory struct {
	networks, placementGroups, firewalls, loadBalancers, servers, snapshots int
}

// checkInventory compares the project with want over the API: exact
// counts, no SSH key (they are temporary), no temporary resource, and no
// two snapshots with the same labels.
func checkInventory(ctx context.Context, t *testing.T, c *hcloud.Client, want inventory) {
	t.Helper()
	nets := listAll(ctx, t, "networks", c.Network.All)
	pgs := listAll(ctx, t, "placement groups", c.PlacementGroup.All)
	fws := listAll(ctx, t, "firewalls", c.Firewall.All)
	lbs := listAll(ctx, t, "load balancers", c.LoadBalancer.All)
	servers := listAll(ctx, t, "servers", c.Server.All)
	snaps := listAll(ctx, t, "snapshots", func(ctx context.Context) ([]*hcloud.Image, error) {
		return c.Image.AllWithOpts(ctx, hcloud.ImageListOpts{Type: []hcloud.ImageType{hcloud.ImageTypeSnapshot}})
	})
	keys := listAll(ctx, t, "ssh keys", c.SSHKey.All)
	got := inventory{len(nets), len(pgs), len(fws), len(lbs), len(servers), len(snaps)}
	if got != want {
		var names []string
		for _, s := range servers {
			names = append(names, s.Name)
		}
		t.Errorf("project holds %+v, want %+v (servers %v)", got, want, names)
	}
	if len(keys) != 0 {
		t.Errorf("%d ssh keys left (the image builds' keys are temporary): %v", len(keys), keys[0].Name)
	}
	seen := map[string]int64{}
	for _, img := range snaps {
		if img.Labels["ohmytalos.io/temporary"] != "" {
			t.Errorf("snapshot %d still has temporary labels %v", img.ID, img.Labels)
		}
		k := labelKey(img.Labels)
		if other, dup := seen[k]; dup {
			t.Errorf("snapshots %d and %d have the same labels %s", other, img.ID, k)
		}
		seen[k] = img.ID
	}
	for _, s := range servers {
		if s.Labels["ohmytalos.io/temporary"] != "" {
			t.Errorf("temporary server %s left behind", s.Name)
		}
	}
}

// listAll is what list returns; it fails t, naming what, when the list
// fails.
func listAll[T any](ctx context.Context, t *testing.T, what string, list func(context.Context) ([]T, error)) []T {
	t.Helper()
	all, err := list(ctx)
	if err != nil {
		t.Fatalf("list %s: %v", what, err)
	}
	return all
}

func labelKey(l map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(l)) {
		fmt.Fprintf(&b, "%s=%s,", k, l[k])
	}
	return b.String()
}

// checkState opens the state as the CLI does and requires every step done.
func checkState(t *testing.T, dir, name, keyFile string) *state.Store {
	t.Helper()
	keys, err := state.LoadKeyring([]string{keyFile}, keyFile)
	if err != nil {
		t.Fatalf("load age key: %v", err)
	}
	st, err := state.Open(dir, name, keys)
	if err != nil {
		t.Fatalf("state unreadable after the kills: %v", err)
	}
	for _, s := range []string{"secrets", "images", "network", "pools", "configs", "servers", "bootstrap"} {
		if got := st.Get().Step(s); got.Status != state.StatusDone {
			t.Errorf("step %s is %q (%s), want done", s, got.Status, got.Error)
		}
	}
	return st
}

// checkEtcd asks every control plane for the etcd members over the Talos
// API, with the talosconfig from the state: one cluster, want voters.
func checkEtcd(ctx context.Context, t *testing.T, c *hcloud.Client, st *state.Store, want int) {
	t.Helper()
	tc, err := st.Secret("talosconfig")
	if err != nil {
		t.Fatalf("read talosconfig from the state: %v", err)
	}
	servers, err := c.Server.AllWithOpts(ctx, hcloud.ServerListOpts{ListOpts: hcloud.ListOpts{LabelSelector: "ohmytalos.io/role=controlplane"}})
	if err != nil {
		t.Fatalf("list control planes: %v", err)
	}
	if len(servers) != want {
		t.Fatalf("%d control plane servers, want %d", len(servers), want)
	}
	var first string
	for _, s := range servers {
		tcl, err := talosapi.Connect(ctx, tc, s.PublicNet.IPv4.IP.String())
		if err != nil {
			t.Fatalf("connect to %s: %v", s.Name, err)
		}
		ms, err := tcl.EtcdMembers(ctx)
		tcl.Close()
		if err != nil {
			t.Fatalf("etcd members on %s: %v", s.Name, err)
		}
		var ids []string
		for _, m := range ms {
			if !m.Learner {
				ids = append(ids, m.ID)
			}
		}
		slices.Sort(ids)
		if len(ids) != want {
			t.Errorf("%s sees %d etcd voters, want %d", s.Name, len(ids), want)
		}
		key := strings.Join(ids, ",")
		if first == "" {
			first = key
		} else if key != first {
			t.Errorf("%s sees etcd members %s, another control plane %s: more than one etcd cluster", s.Name, key, first)
		}
	}
}
