package steps

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/internal/testworld"
)

// TestSecondCheckoutCannotTouchTheFirst is issue 21's "done when": a
// checkout of the same spec in another folder, never applied, cannot
// change the first cluster (apply --only pools with another
// firewall.allow), and says why; steps/destroy's
// TestSecondCheckoutCannotDestroyTheFirst shows it cannot delete it.
func TestSecondCheckoutCannotTouchTheFirst(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "../examples/seed.yaml")
	if _, err := w.apply(t, context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	first := w.env(t).State.ClusterID()
	if len(first) != 32 {
		t.Fatalf("cluster ID %q, want 32 hex characters", first)
	}
	for _, s := range w.SB.HCloud.Servers() {
		if s.Labels[cloud.LabelClusterID] != first {
			t.Errorf("server %s labels %v lack the cluster ID", s.Name, s.Labels)
		}
	}
	d := w.deps()
	c, err := d.HCloud(context.Background(), w.Spec)
	if err != nil {
		t.Fatal(err)
	}
	fwBefore := liveFirewallRules(t, c, w.Spec.Name)

	other, err := spec.Load("../examples/seed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	other.Firewall.Allow = []string{"203.0.113.7/32"}
	w2 := &world{&testworld.World{SB: w.SB, Dir: filepath.Join(t.TempDir(), ".ohmytalos", other.Name), Spec: other, KeyFile: w.KeyFile}}

	// apply --only pools: refused, nothing changed.
	err = engine.New(All(w2.deps())...).Run(context.Background(), w2.env(t), engine.Options{Only: StepPools}, nil)
	if err == nil || !strings.Contains(err.Error(), "another checkout or cluster of the same name owns it") {
		t.Fatalf("second checkout's apply --only pools: %v, want a refusal naming the owner", err)
	}
	if got := liveFirewallRules(t, c, w.Spec.Name); got != fwBefore {
		t.Errorf("the first cluster's firewall changed: %s -> %s", fwBefore, got)
	}
	// plan says the same.
	if _, err := engine.New(All(w2.deps())...).Plan(context.Background(), w2.env(t)); err == nil || !strings.Contains(err.Error(), "owns it") {
		t.Errorf("second checkout's plan: %v", err)
	}
}

// TestStateWithoutIDGetsOneAndLabelsOnlyItsResources: a cluster applied
// before cluster IDs gets one on its next apply; only the resources its
// state lists get the label.
func TestStateWithoutIDGetsOneAndLabelsOnlyItsResources(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "../examples/seed.yaml")
	if _, err := w.apply(t, context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	d := w.deps()
	c, err := d.HCloud(context.Background(), w.Spec)
	if err != nil {
		t.Fatal(err)
	}
	// Make it a state from before cluster IDs: no ID anywhere.
	stripIDs(t, c)
	if err := os.Remove(filepath.Join(w.Dir, "secrets", "cluster-id")); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(w.Dir, "state.json"))
	b = []byte(strings.Replace(string(b), `"clusterID": "`+w.env(t).State.ClusterID()+`",`, "", 1))
	if err := os.WriteFile(filepath.Join(w.Dir, "state.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if id := w.env(t).State.ClusterID(); id != "" {
		t.Fatalf("ID still there: %s", id)
	}
	// A stray server with the cluster's name, not in the state.
	if _, _, err := c.Server.Create(context.Background(), hcloud.ServerCreateOpts{Name: "stray", ServerType: &hcloud.ServerType{Name: "cpx22"},
		Image: &hcloud.Image{Name: "debian-12"}, Location: &hcloud.Location{Name: "nbg1"},
		Labels: cloud.ClusterLabels(w.Spec.Name, "worker", nil)}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.apply(t, context.Background(), nil); err != nil {
		t.Fatalf("apply of a state without ID: %v", err)
	}
	id := w.env(t).State.ClusterID()
	if id == "" {
		t.Fatal("no cluster ID after apply")
	}
	for _, s := range w.SB.HCloud.Servers() {
		got := s.Labels[cloud.LabelClusterID]
		if s.Name == "stray" && got != "" {
			t.Errorf("the stray server got the ID")
		}
		if s.Name != "stray" && got != id {
			t.Errorf("server %s: cluster ID %q, want %q", s.Name, got, id)
		}
	}
	nets, _ := c.Network.All(context.Background())
	fws, _ := c.Firewall.All(context.Background())
	if len(nets) != 1 || nets[0].Labels[cloud.LabelClusterID] != id || len(fws) != 1 || fws[0].Labels[cloud.LabelClusterID] != id {
		t.Errorf("network or firewall not labelled with the new ID")
	}
}

// stripIDs removes the cluster ID label from every server, network and
// firewall, as a cluster made before cluster IDs has them.
func stripIDs(t *testing.T, c *hcloud.Client) {
	t.Helper()
	ctx := context.Background()
	servers, _ := c.Server.All(ctx)
	for _, s := range servers {
		if _, _, err := c.Server.Update(ctx, s, hcloud.ServerUpdateOpts{Labels: cloud.WithoutClusterID(s.Labels)}); err != nil {
			t.Fatal(err)
		}
	}
	nets, _ := c.Network.All(ctx)
	for _, n := range nets {
		if _, _, err := c.Network.Update(ctx, n, hcloud.NetworkUpdateOpts{Labels: cloud.WithoutClusterID(n.Labels)}); err != nil {
			t.Fatal(err)
		}
	}
	fws, _ := c.Firewall.All(ctx)
	for _, f := range fws {
		if _, _, err := c.Firewall.Update(ctx, f, hcloud.FirewallUpdateOpts{Labels: cloud.WithoutClusterID(f.Labels)}); err != nil {
			t.Fatal(err)
		}
	}
}

// liveFirewallRules renders the cluster firewall's rules.
func liveFirewallRules(t *testing.T, c *hcloud.Client, name string) string {
	t.Helper()
	fws, err := c.Firewall.AllWithOpts(context.Background(), hcloud.FirewallListOpts{ListOpts: hcloud.ListOpts{LabelSelector: cloud.ClusterSelector(name)}})
	if err != nil || len(fws) != 1 {
		t.Fatalf("firewalls: %v, %v", fws, err)
	}
	return formatRules(fws[0].Rules)
}
