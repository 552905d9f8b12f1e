package steps

import (
	"strings"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/kube"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

func TestClusterReadiness(t *testing.T) {
	cases := []struct {
		name     string
		r        clusterReadiness
		done     bool
		progress string
		missing  []string
	}{
		{"all there", clusterReadiness{wantNodes: 2, ready: 2, readyWL: 4, totalWL: 4, checkReady: true, checkProvider: true}, true,
			"2/2 nodes Ready, 2 with a provider ID, 4/4 add-on workloads ready", nil},
		{"no CNI yet", clusterReadiness{wantNodes: 2, ready: 0, notReady: []string{"a: no CNI", "b: no CNI"}, noProviderID: []string{"a", "b"},
			workloads: []string{"DaemonSet kube-system/cilium 0/2 ready"}, totalWL: 4, readyWL: 3, checkReady: true, checkProvider: true}, false,
			"0/2 nodes Ready, 0 with a provider ID, 3/4 add-on workloads ready",
			[]string{"NotReady nodes: a: no CNI; b: no CNI", "without a provider ID", "DaemonSet kube-system/cilium 0/2 ready"}},
		{"a node missing", clusterReadiness{wantNodes: 3, ready: 2, missingNodes: 1, checkReady: true}, false,
			"2/3 nodes Ready, 0/0 add-on workloads ready", []string{"1 of 3 nodes have not registered"}},
		{"Cilium off: NotReady is expected", clusterReadiness{wantNodes: 1, notReady: []string{"a: no CNI"}, checkProvider: true, totalWL: 1, readyWL: 1}, true,
			"0/1 nodes Ready, 1 with a provider ID, 1/1 add-on workloads ready", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.r.done() != c.done {
				t.Errorf("done = %t, want %t", !c.done, c.done)
			}
			if p := c.r.progress(); p != c.progress {
				t.Errorf("progress = %q, want %q", p, c.progress)
			}
			for _, m := range c.missing {
				if !strings.Contains(c.r.missing(), m) {
					t.Errorf("missing() = %q lacks %q", c.r.missing(), m)
				}
			}
		})
	}
}

func TestAddonWorkloadsFollowTheSpec(t *testing.T) {
	sp := spec.Default("demo")
	var got []string
	for _, w := range addonWorkloads(sp) {
		got = append(got, w.Addon+":"+w.Kind+"/"+w.Name)
	}
	want := "cilium:DaemonSet/cilium,cilium:Deployment/cilium-operator,hcloud-ccm:Deployment/hcloud-cloud-controller-manager," +
		"hcloud-csi:Deployment/hcloud-csi-controller,hcloud-csi:DaemonSet/hcloud-csi-node,ingress:Deployment/traefik"
	if strings.Join(got, ",") != want {
		t.Fatalf("workloads = %s", strings.Join(got, ","))
	}
}

func TestNodeLineSaysWhatTheNodeAwaits(t *testing.T) {
	both := clusterReadiness{checkReady: true, checkProvider: true}
	cases := []struct {
		name   string
		r      clusterReadiness
		n      kube.NodeInfo
		status string
		ok     bool
	}{
		{"ready with an ID", both, kube.NodeInfo{Name: "a", Ready: true, ProviderID: "hcloud://42"}, "Ready, provider ID hcloud://42", true},
		{"no CNI", both, kube.NodeInfo{Name: "a", Reason: "no CNI"}, "NotReady: no CNI; waiting for the cloud controller to set its provider ID", false},
		{"ready, no ID", both, kube.NodeInfo{Name: "a", Ready: true}, "Ready; waiting for the cloud controller to set its provider ID", false},
		{"Cilium off", clusterReadiness{checkProvider: true}, kube.NodeInfo{Name: "a", ProviderID: "hcloud://7"}, "NotReady (no CNI switched on), provider ID hcloud://7", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := c.r.nodeLine(c.n)
			if l.resource != "node/a" || l.status != c.status || l.ok != c.ok {
				t.Errorf("nodeLine = %+v, want node/a %q ok=%t", l, c.status, c.ok)
			}
		})
	}
}

func TestEmitLinesReportsChangesOnly(t *testing.T) {
	seen := map[string]string{}
	var evs []engine.Event
	emit := func(ev engine.Event) { evs = append(evs, ev) }
	first := []readinessLine{{resource: "node/a", status: "NotReady: no CNI"}, {resource: "daemonset/cilium", status: "cilium: 0/1 ready"}}
	emitLines(first, seen, emit)
	emitLines(first, seen, emit)
	emitLines([]readinessLine{{resource: "node/a", status: "Ready, provider ID hcloud://1", ok: true}, first[1]}, seen, emit)
	if len(evs) != 3 {
		t.Fatalf("got %d events, want 3 (two first looks, one change): %+v", len(evs), evs)
	}
	last := evs[2]
	if last.Kind != engine.KindProgress || last.Resource != "node/a" || last.Fraction != 1 || last.Message != "Ready, provider ID hcloud://1" {
		t.Errorf("change event = %+v", last)
	}
	if evs[0].Fraction != 0 {
		t.Errorf("a NotReady node reported fraction %v, want 0", evs[0].Fraction)
	}
}
