package ui

import (
	"time"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/steps"
)

// addonsWaitEvents are the events steps.Addons emits for a demo cluster
// while it applies the add-ons and waits (the same Resource and Message
// forms: steps/addons.go and steps/addons_wait.go), stopped where two
// nodes and the CSI node DaemonSet are still waiting.
func addonsWaitEvents() []engine.Event {
	at := func(s int) time.Time { return t0().Add(time.Duration(s) * time.Second) }
	ev := func(s int, e engine.Event) engine.Event { e.Step, e.Time = steps.StepAddons, at(s); return e }
	return []engine.Event{
		ev(0, engine.Event{Kind: engine.KindStarted, Message: "Add-ons: Cilium, Hetzner CCM and CSI"}),
		ev(1, engine.Event{Kind: engine.KindResource, Action: "apply", Resource: "addon/hcloud-secret",
			Message: "Secret/kube-system/hcloud applied (1/1 objects, server-side, field manager ohmytalos)"}),
		ev(1, engine.Event{Kind: engine.KindResource, Action: "apply", Resource: "addon/cilium",
			Message: "Deployment/kube-system/cilium-operator applied (12/12 objects, server-side, field manager ohmytalos)"}),
		ev(2, engine.Event{Kind: engine.KindResource, Action: "apply", Resource: "addon/hcloud-ccm",
			Message: "Deployment/kube-system/hcloud-cloud-controller-manager applied (4/4 objects, server-side, field manager ohmytalos)"}),
		ev(2, engine.Event{Kind: engine.KindResource, Action: "apply", Resource: "addon/hcloud-csi",
			Message: "DaemonSet/kube-system/hcloud-csi-node applied (7/7 objects, server-side, field manager ohmytalos)"}),
		ev(3, engine.Event{Kind: engine.KindProgress, Resource: "node/demo-cp-1", Fraction: 1, Message: "Ready, provider ID hcloud://101"}),
		ev(3, engine.Event{Kind: engine.KindProgress, Resource: "node/demo-worker-1",
			Message: "NotReady: no CNI: the network plugin is not ready (is Cilium running?); waiting for the cloud controller to set its provider ID"}),
		ev(3, engine.Event{Kind: engine.KindProgress, Resource: "node/demo-worker-2", Message: "Ready; waiting for the cloud controller to set its provider ID"}),
		ev(3, engine.Event{Kind: engine.KindProgress, Resource: "daemonset/cilium", Fraction: 1, Message: "cilium: 3/3 ready"}),
		ev(3, engine.Event{Kind: engine.KindProgress, Resource: "daemonset/hcloud-csi-node", Message: "hcloud-csi: 1/3 ready"}),
		ev(3, engine.Event{Kind: engine.KindProgress, Resource: "nodes", Fraction: 0.5,
			Message: "2/3 nodes Ready, 1 with a provider ID, 4/5 add-on workloads ready"}),
	}
}

// addonsTimeout is the failed event steps.Addons ends with when the wait
// runs out (its error names what is missing).
func addonsTimeout() engine.Event {
	return engine.Event{Step: steps.StepAddons, Kind: engine.KindFailed, Time: t0().Add(20 * time.Minute),
		Error: "addons: the cluster is not ready after 20m0s: NotReady nodes: demo-worker-1: no CNI: the network plugin is not ready (is Cilium running?); " +
			"workloads not ready: DaemonSet kube-system/hcloud-csi-node 1/3 ready. Run \"ohmytalos doctor --check nodes-ready,addons\" to see why, " +
			"then \"ohmytalos apply --only addons\" to wait again: context deadline exceeded"}
}

// addonsDone ends the wait with every node Ready.
func addonsDone() []engine.Event {
	at := t0().Add(30 * time.Second)
	return []engine.Event{
		{Step: steps.StepAddons, Time: at, Kind: engine.KindProgress, Resource: "node/demo-worker-1", Fraction: 1, Message: "Ready, provider ID hcloud://102"},
		{Step: steps.StepAddons, Time: at, Kind: engine.KindProgress, Resource: "node/demo-worker-2", Fraction: 1, Message: "Ready, provider ID hcloud://103"},
		{Step: steps.StepAddons, Time: at, Kind: engine.KindProgress, Resource: "daemonset/hcloud-csi-node", Fraction: 1, Message: "hcloud-csi: 3/3 ready"},
		{Step: steps.StepAddons, Time: at, Kind: engine.KindProgress, Resource: "nodes", Fraction: 1,
			Message: "3/3 nodes Ready, 3 with a provider ID, 5/5 add-on workloads ready"},
		{Step: steps.StepAddons, Time: at, Kind: engine.KindDone, Message: "Add-ons: Cilium, Hetzner CCM and CSI done", Elapsed: 30 * time.Second},
	}
}
