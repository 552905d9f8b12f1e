package destroy

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/addons"
	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/engine"
)

func TestDestroyLeavesNothingLabelled(t *testing.T) {
	t.Parallel()
	w, d := appliedSeed(t)
	env := w.env(t)
	c, err := d.HCloud(context.Background(), w.Spec)
	if err != nil {
		t.Fatal(err)
	}
	// A load balancer the cloud controller made for a Service: unlabelled
	// for ohmytalos, but in the cluster network, where it blocks deletion.
	nets, err := c.Network.AllWithOpts(context.Background(), hcloud.NetworkListOpts{ListOpts: hcloud.ListOpts{LabelSelector: cloud.ClusterSelector(w.Spec.Name)}})
	if err != nil || len(nets) != 1 {
		t.Fatalf("network: %v, %v", nets, err)
	}
	netw := nets[0]
	_, _, err = c.LoadBalancer.Create(context.Background(), hcloud.LoadBalancerCreateOpts{
		Name: "a1b2c3", LoadBalancerType: &hcloud.LoadBalancerType{Name: "lb11"}, Location: &hcloud.Location{Name: "nbg1"},
		Network: netw, Labels: map[string]string{"hcloud-ccm/service-uid": "1234"},
	})
	if err != nil {
		t.Fatal(err)
	}
	// A volume the CSI driver made for a claim, labelled as the rendered
	// controller tells it to (HCLOUD_VOLUME_EXTRA_LABELS), and another
	// cluster's, which stays.
	csiLabels := func(cluster string) map[string]string {
		l := map[string]string{"managed-by": "csi-driver", "pvc-namespace": "default", "pvc-name": "data"}
		for kv := range strings.SplitSeq(addons.CSIVolumeLabels(cluster, env.State.ClusterID()), ",") {
			k, v, _ := strings.Cut(kv, "=")
			l[k] = v
		}
		return l
	}
	for name, cluster := range map[string]string{"pvc-1": w.Spec.Name, "pvc-2": "other"} {
		if _, _, err := c.Volume.Create(context.Background(), hcloud.VolumeCreateOpts{Name: name, Size: 10,
			Location: &hcloud.Location{Name: "nbg1"}, Labels: csiLabels(cluster)}); err != nil {
			t.Fatal(err)
		}
	}
	p, err := NewPlan(context.Background(), d, env, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(p.Items, func(i Doomed) bool {
		return i.Kind == "volume" && i.Name == "pvc-1" && strings.Contains(i.Why, "CSI driver for claim default/data")
	}) || slices.ContainsFunc(p.Items, func(i Doomed) bool { return i.Name == "pvc-2" }) {
		t.Errorf("destroy plan and the CSI volumes: %+v", p.Items)
	}
	if len(p.LoadBalancers) != 2 || len(p.Servers) != 5 || len(p.Networks) != 1 || len(p.Snapshots) != 0 {
		t.Fatalf("plan: %d LBs, %d servers, %d networks, %d snapshots", len(p.LoadBalancers), len(p.Servers), len(p.Networks), len(p.Snapshots))
	}
	if err := Run(context.Background(), d, env, p, func(engine.Event) {}); err != nil {
		t.Fatal(err)
	}
	sel := cloud.ClusterSelector(w.Spec.Name)
	servers, _ := c.Server.AllWithOpts(context.Background(), hcloud.ServerListOpts{ListOpts: hcloud.ListOpts{LabelSelector: sel}})
	nets, _ = c.Network.AllWithOpts(context.Background(), hcloud.NetworkListOpts{ListOpts: hcloud.ListOpts{LabelSelector: sel}})
	fws, _ := c.Firewall.AllWithOpts(context.Background(), hcloud.FirewallListOpts{ListOpts: hcloud.ListOpts{LabelSelector: sel}})
	pgs, _ := c.PlacementGroup.AllWithOpts(context.Background(), hcloud.PlacementGroupListOpts{ListOpts: hcloud.ListOpts{LabelSelector: sel}})
	lbs, _ := c.LoadBalancer.All(context.Background())
	if len(servers)+len(nets)+len(fws)+len(pgs)+len(lbs) != 0 {
		t.Errorf("left: %d servers, %d networks, %d firewalls, %d groups, %d load balancers", len(servers), len(nets), len(fws), len(pgs), len(lbs))
	}
	if vols, _ := c.Volume.All(context.Background()); len(vols) != 1 || vols[0].Name != "pvc-2" {
		t.Errorf("volumes left: %v, want only the other cluster's pvc-2", vols)
	}
	if got := w.SB.HCloud.Counts()["images"]; got != 2 {
		t.Errorf("snapshots = %d, want the 2 shared ones kept", got)
	}
	// Re-running finds nothing and succeeds.
	p2, err := NewPlan(context.Background(), d, w.env(t), Options{})
	if err != nil || len(p2.Items) != 0 {
		t.Errorf("second plan: %v, %v", p2, err)
	}
	// The cluster can be applied again from the same state.
	if _, err := w.apply(t, context.Background(), engine.Options{}); err != nil {
		t.Fatalf("apply after destroy: %v", err)
	}
	checkCountsAfterRecreate(t, w)
}

func checkCountsAfterRecreate(t *testing.T, w *world) {
	t.Helper()
	got := w.SB.HCloud.Counts()
	if got["servers"] != 5 || got["networks"] != 1 || got["images"] != 2 {
		t.Errorf("after re-apply: %v", got)
	}
}
