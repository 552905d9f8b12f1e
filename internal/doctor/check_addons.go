package doctor

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// defaultAddonWorkloads are what the addons step installs by default
// (internal/addons): the CNI, the cloud controller and the CSI driver.
var defaultAddonWorkloads = []WorkloadRef{
	{"cilium", "DaemonSet", "kube-system", "cilium"},
	{"cilium", "Deployment", "kube-system", "cilium-operator"},
	{"hcloud-ccm", "Deployment", "kube-system", "hcloud-cloud-controller-manager"},
	{"hcloud-csi", "Deployment", "kube-system", "hcloud-csi-controller"},
	{"hcloud-csi", "DaemonSet", "kube-system", "hcloud-csi-node"},
}

// checkNodesReady lists NotReady nodes with the reason in operator terms:
// no CNI (Cilium not running), uninitialized (the cloud controller has not
// run), or kubelet's own words.
func checkNodesReady(ctx context.Context, env *Env) Result {
	nodes, r, ok := fetch(ctx, env.Kube, noKube, KubeSource.Nodes, "the Kubernetes nodes")
	if !ok {
		return r
	}
	want := len(env.ControlPlanes) + len(env.Workers)
	var notReady, evidence []string
	noCNI, uninit := false, false
	for _, n := range nodes {
		if n.Ready {
			evidence = append(evidence, n.Name+": Ready")
			continue
		}
		notReady = append(notReady, fmt.Sprintf("%s: NotReady, %s", n.Name, n.NotReadyReason))
		low := strings.ToLower(n.NotReadyReason)
		noCNI = noCNI || strings.Contains(low, "cni")
		uninit = uninit || strings.Contains(low, "uninitialized") || containsFold(n.Taints, "node.cloudprovider.kubernetes.io/uninitialized")
	}
	sort.Strings(notReady)
	var problems []string
	if want > 0 && len(nodes) < want {
		problems = append(problems, fmt.Sprintf("%d of %d nodes have registered with Kubernetes", len(nodes), want))
	}
	problems = append(problems, notReady...)
	if len(problems) == 0 {
		if len(nodes) == 0 {
			return skip("the cluster has no nodes yet")
		}
		return pass(evidence...)
	}
	var why, fixes []string
	if noCNI {
		why = append(why, "the machine configs set CNI none and disable kube-proxy: until Cilium runs, kubelet reports the network plugin not ready and no pod gets an address")
		fixes = append(fixes, "install Cilium: ohmytalos apply --only addons (addons.cilium.enabled: true), then check kubectl -n kube-system get ds cilium")
	}
	if uninit {
		why = append(why, "with an external cloud provider, a node keeps the node.cloudprovider.kubernetes.io/uninitialized taint until the Hetzner cloud controller initialises it")
		fixes = append(fixes, "check that hcloud-cloud-controller-manager runs and the kube-system/hcloud Secret holds a valid token and network (kubectl -n kube-system logs deploy/hcloud-cloud-controller-manager)")
	}
	if len(why) == 0 {
		why = append(why, "NotReady nodes get no new pods, and their pods are evicted after a while")
		fixes = append(fixes, "look at the node's conditions (kubectl describe node NAME) and its kubelet (talosctl -n NODE logs kubelet)")
	}
	return failed(problems, evidence, strings.Join(why, "; "), strings.Join(fixes, "; "))
}

// checkAddons verifies that the add-ons' workloads exist and are ready.
func checkAddons(ctx context.Context, env *Env) Result {
	if env.Kube == nil {
		return skip(noKube)
	}
	refs := env.AddonWorkloads
	if len(refs) == 0 {
		refs = defaultAddonWorkloads
	}
	var problems, evidence []string
	broken := map[string]bool{}
	for _, r := range refs {
		w, err := env.Kube.Workload(ctx, r.Kind, r.Namespace, r.Name)
		if err != nil {
			return sourceError(fmt.Sprintf("%s %s/%s", r.Kind, r.Namespace, r.Name), err)
		}
		where := fmt.Sprintf("%s: %s %s/%s", r.Addon, r.Kind, r.Namespace, r.Name)
		switch {
		case w == nil:
			problems = append(problems, where+" is not installed")
			broken[r.Addon] = true
		case w.Want == 0 || w.Ready < w.Want:
			problems = append(problems, fmt.Sprintf("%s: %d/%d ready", where, w.Ready, w.Want))
			broken[r.Addon] = true
		default:
			evidence = append(evidence, fmt.Sprintf("%s: %d/%d ready", where, w.Ready, w.Want))
		}
	}
	if len(problems) == 0 {
		return pass(evidence...)
	}
	names := make([]string, 0, len(broken))
	for n := range broken {
		names = append(names, n)
	}
	sort.Strings(names)
	return failed(problems, evidence,
		"without Cilium nodes stay NotReady; without the cloud controller nodes keep the uninitialized taint, get no provider ID and load balancers get no targets; without the CSI driver every PersistentVolumeClaim stays Pending. Not ready: "+strings.Join(names, ", "),
		"run ohmytalos apply --only addons to install or update them, then look at the pods that are not ready (kubectl -n kube-system get pods; kubectl describe pod NAME)")
}
