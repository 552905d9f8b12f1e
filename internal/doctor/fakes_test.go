package doctor

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// fakeTalos is an in-memory TalosSource keyed by the node key (private IP).
type fakeTalos struct {
	links   map[string][]Link
	addrs   map[string][]Address
	vipLink map[string]string
	vip     map[string]string
	members map[string][]EtcdMember
	errs    map[string]error
	// versions: node key -> Talos tag; a missing node errs.
	versions map[string]string
	routes   map[string][]Route
}

func (f *fakeTalos) Routes(_ context.Context, node string) ([]Route, error) {
	if r, ok := f.routes[node]; ok {
		return r, f.err(node)
	}
	return nil, fmt.Errorf("no routes for %s", node)
}

func (f *fakeTalos) TalosVersion(_ context.Context, node string) (string, error) {
	if v, ok := f.versions[node]; ok {
		return v, f.err(node)
	}
	return "", fmt.Errorf("no version for %s", node)
}

func (f *fakeTalos) err(node string) error {
	if e, ok := f.errs[node]; ok {
		return e
	}
	return nil
}

func (f *fakeTalos) Links(_ context.Context, node string) ([]Link, error) {
	return f.links[node], f.err(node)
}
func (f *fakeTalos) Addresses(_ context.Context, node string) ([]Address, error) {
	return f.addrs[node], f.err(node)
}
func (f *fakeTalos) VIPConfig(_ context.Context, node string) (string, string, error) {
	return f.vipLink[node], f.vip[node], f.err(node)
}
func (f *fakeTalos) EtcdMembers(_ context.Context, node string) ([]EtcdMember, error) {
	if err := f.err(node); err != nil {
		return nil, err
	}
	if m, ok := f.members[node]; ok {
		return m, nil
	}
	return nil, fmt.Errorf("etcd is not running on %s", node)
}

type fakeCloud struct {
	lbs     []LoadBalancer
	servers []Server
	snaps   []Snapshot
	budget  *APIBudget
	err     error
}

func (f *fakeCloud) APIBudget(context.Context) (*APIBudget, error) { return f.budget, f.err }

func (f *fakeCloud) LoadBalancers(context.Context) ([]LoadBalancer, error) { return f.lbs, f.err }
func (f *fakeCloud) Servers(context.Context) ([]Server, error)             { return f.servers, f.err }
func (f *fakeCloud) Snapshots(context.Context) ([]Snapshot, error)         { return f.snaps, f.err }

type fakeKube struct {
	nodes     []KubeNode
	cilium    *CiliumConfig
	policies  []CiliumPolicy       // nil: the kind is not served
	nsPolicy  []CiliumPolicy       // CiliumNetworkPolicies and NetworkPolicies
	nsReads   int                  // NamespacedPolicies calls
	workloads map[string]*Workload // "Kind/ns/name"
	services  []LBService
	pulls     []PullFailure
	ccmEnv    map[string]string
	err       error
}

func (f *fakeKube) LoadBalancerServices(context.Context) ([]LBService, error) {
	return f.services, f.err
}
func (f *fakeKube) PullFailures(context.Context) ([]PullFailure, error) { return f.pulls, f.err }

func (f *fakeKube) CloudControllerEnv(context.Context) (map[string]string, error) {
	return f.ccmEnv, f.err
}

func (f *fakeKube) Workload(_ context.Context, kind, ns, name string) (*Workload, error) {
	return f.workloads[kind+"/"+ns+"/"+name], f.err
}

func (f *fakeKube) Nodes(context.Context) ([]KubeNode, error)           { return f.nodes, f.err }
func (f *fakeKube) CiliumConfig(context.Context) (*CiliumConfig, error) { return f.cilium, f.err }
func (f *fakeKube) CiliumClusterwidePolicies(context.Context) ([]CiliumPolicy, error) {
	return f.policies, f.err
}
func (f *fakeKube) NamespacedPolicies(context.Context) ([]CiliumPolicy, error) {
	f.nsReads++
	return f.nsPolicy, f.err
}

// healthyCluster returns an Env of three control planes and one worker on a
// Talos-on-Hetzner layout where everything is right.
func healthyCluster() (*Env, *fakeTalos) {
	cps := []NodeRef{
		{Name: "cp-1", PublicIP: "203.0.113.1", PrivateIP: "10.0.1.1"},
		{Name: "cp-2", PublicIP: "203.0.113.2", PrivateIP: "10.0.1.2"},
		{Name: "cp-3", PublicIP: "203.0.113.3", PrivateIP: "10.0.1.3"},
	}
	workers := []NodeRef{{Name: "worker-1", PublicIP: "203.0.113.11", PrivateIP: "10.0.2.1"}}
	t := &fakeTalos{links: map[string][]Link{}, addrs: map[string][]Address{}, vipLink: map[string]string{}, vip: map[string]string{},
		members: map[string][]EtcdMember{}, errs: map[string]error{}}
	var members []EtcdMember
	for i, n := range append(append([]NodeRef{}, cps...), workers...) {
		t.links[n.PrivateIP] = []Link{{Name: "lo", MTU: 65536, Up: true}, {Name: "eth0", MTU: 1500, Up: true}, {Name: "eth1", MTU: 1450, Up: true}}
		t.addrs[n.PrivateIP] = []Address{{Link: "eth0", CIDR: n.PublicIP + "/32"}, {Link: "eth1", CIDR: n.PrivateIP + "/32"}}
		if i < len(cps) {
			t.vipLink[n.PrivateIP], t.vip[n.PrivateIP] = "eth1", "10.0.1.100"
			members = append(members, EtcdMember{ID: uint64(0xa0 + i), Name: n.Name})
		}
	}
	t.addrs["10.0.1.1"] = append(t.addrs["10.0.1.1"], Address{Link: "eth1", CIDR: "10.0.1.100/32"})
	for _, cp := range cps {
		t.members[cp.PrivateIP] = members
	}
	env := &Env{ClusterName: "prod", VIP: "10.0.1.100", VIPLink: "eth1", PrivateCIDR: "10.0.1.0/24",
		ControlPlanes: cps, Workers: workers, Talos: t}
	return env, t
}

func talosCaps() []string { return append([]string(nil), talosAgentCaps...) }

func goodCilium() *CiliumConfig {
	return &CiliumConfig{K8sServiceHost: "localhost", K8sServicePort: 7445, CgroupHostRoot: "/sys/fs/cgroup",
		AgentCaps: talosCaps(), CleanCaps: []string{"NET_ADMIN", "SYS_ADMIN", "SYS_RESOURCE"}}
}

// expect asserts the status and that the joined evidence, explanation and
// fix contain every wanted fragment.
func expect(t *testing.T, r Result, status Status, fragments ...string) {
	t.Helper()
	all := strings.Join(r.Evidence, "\n") + "\n" + r.Explanation + "\n" + r.Fix
	if r.Status != status {
		t.Fatalf("status = %s, want %s\nevidence:\n%s\nwhy: %s\nfix: %s", r.Status, status, strings.Join(r.Evidence, "\n"), r.Explanation, r.Fix)
	}
	for _, f := range fragments {
		if !strings.Contains(all, f) {
			t.Errorf("result lacks %q:\n%s", f, all)
		}
	}
}
