package doctor

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// HetznerPrivateMTU is the MTU of Hetzner Cloud private networks.
const HetznerPrivateMTU = 1450

// checkMTU compares the private link's MTU with Hetzner's 1450 and with the
// MTUs configured above it (pods, Cilium): larger packets are dropped
// silently (field notes, pitfall 8).
func checkMTU(ctx context.Context, env *Env) Result {
	var problems, warnings, evidence []string
	nodes := append(append([]NodeRef(nil), env.ControlPlanes...), env.Workers...)
	minLink := 0
	if env.Talos != nil {
		for _, n := range nodes {
			key := talosNode(n)
			links, err := env.Talos.Links(ctx, key)
			if err != nil {
				return sourceError("the links of "+n.Name, err)
			}
			addrs, err := env.Talos.Addresses(ctx, key)
			if err != nil {
				return sourceError("the addresses of "+n.Name, err)
			}
			priv := privateLinks(addrs, n.PrivateIP, env.PrivateCIDR)
			if len(priv) == 0 {
				warnings = append(warnings, fmt.Sprintf("%s: no link carries a private address", n.Name))
				continue
			}
			for _, name := range priv {
				l, ok := findLink(links, name)
				if !ok {
					continue
				}
				evidence = append(evidence, fmt.Sprintf("%s: private link %s MTU %d", n.Name, l.Name, l.MTU))
				if l.MTU > HetznerPrivateMTU {
					problems = append(problems, fmt.Sprintf("%s: private link %s has MTU %d, above Hetzner's %d", n.Name, l.Name, l.MTU, HetznerPrivateMTU))
				}
				if minLink == 0 || l.MTU < minLink {
					minLink = l.MTU
				}
			}
		}
	}
	limit := minLink
	if limit == 0 {
		limit = HetznerPrivateMTU
		evidence = append(evidence, fmt.Sprintf("private link MTU assumed to be Hetzner's %d", HetznerPrivateMTU))
	}
	configured := map[string]int{}
	if env.PodMTU > 0 {
		configured["pod MTU (spec)"] = env.PodMTU
	}
	if env.Kube != nil {
		c, err := env.Kube.CiliumConfig(ctx)
		if err != nil {
			return sourceError("Cilium's configuration from the cluster", err)
		}
		if c != nil && c.MTU > 0 {
			configured["Cilium MTU ("+orDefault(c.Source, "cluster")+")"] = c.MTU
		}
	}
	if env.Talos == nil && len(configured) == 0 {
		return skip(noTalos + ", and no MTU is configured")
	}
	names := make([]string, 0, len(configured))
	for k := range configured {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v := configured[k]
		evidence = append(evidence, fmt.Sprintf("%s: %d", k, v))
		if v > limit {
			problems = append(problems, fmt.Sprintf("%s %d is above the private link MTU %d", k, v, limit))
		}
	}
	if len(problems) > 0 {
		return failed(problems, evidence,
			fmt.Sprintf("Hetzner private networks carry at most %d bytes per packet; bigger packets are dropped without an ICMP error, "+
				"so small requests work and large transfers hang (TLS handshakes, image pulls, docker-in-docker CI runners that default to 1500).", HetznerPrivateMTU),
			fmt.Sprintf("keep every MTU at or below %d: leave the private link at its DHCP value, set Cilium's MTU (and the pod MTU) to %d or less "+
				"(minus 50 with VXLAN tunnelling), and start docker-in-docker with --mtu=%d or lower", limit, limit, limit-50))
	}
	if len(warnings) > 0 {
		return Result{Status: StatusWarn, Evidence: append(warnings, evidence...),
			Explanation: "some nodes have no link on the private network, so their MTU could not be checked",
			Fix:         "attach the servers to the cluster network (hcloud server attach-to-network)"}
	}
	return pass(evidence...)
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// checkEtcd verifies that etcd's members are exactly the control planes, none
// a learner, and that snapshots are recent when backups are configured
// (field notes, pitfall 9).
func checkEtcd(ctx context.Context, env *Env) Result {
	if env.Talos == nil {
		return skip(noTalos)
	}
	if len(env.ControlPlanes) == 0 {
		return skip("no control planes known")
	}
	var (
		members []EtcdMember
		errs    []string
		from    string
	)
	for _, cp := range env.ControlPlanes {
		m, err := env.Talos.EtcdMembers(ctx, talosNode(cp))
		if err == nil {
			members, from = m, cp.Name
			break
		}
		errs = append(errs, fmt.Sprintf("%s: %v", cp.Name, err))
	}
	if from == "" {
		r := sourceError("the etcd members from any control plane", fmt.Errorf("%s", strings.Join(errs, "; ")))
		r.Fix = "check that the control planes are up and etcd is running (talosctl -n NODE service etcd), then run the doctor again"
		return r
	}
	evidence := append([]string{}, errs...)
	var problems []string
	memberNames := map[string]bool{}
	for _, m := range members {
		memberNames[m.Name] = true
		state := "voting member"
		if m.IsLearner {
			state = "learner"
			problems = append(problems, fmt.Sprintf("member %s is still a learner", m.Name))
		}
		evidence = append(evidence, fmt.Sprintf("etcd member %s (%x): %s", m.Name, m.ID, state))
	}
	cpNames := map[string]bool{}
	for _, cp := range env.ControlPlanes {
		cpNames[cp.Name] = true
		if !memberNames[cp.Name] {
			problems = append(problems, fmt.Sprintf("control plane %s is not an etcd member", cp.Name))
		}
	}
	for _, n := range sortedKeys(memberNames) {
		if !cpNames[n] {
			problems = append(problems, fmt.Sprintf("etcd member %s is not a control plane of the cluster (a removed node?)", n))
		}
	}
	evidence = append(evidence, fmt.Sprintf("members as seen from %s", from))
	if len(problems) > 0 {
		return failed(problems, evidence,
			fmt.Sprintf("etcd's membership does not match the %d control planes: a missing member weakens quorum, a stale one counts against it "+
				"(with 3 members, one stale and one down means no quorum and no API)", len(env.ControlPlanes)),
			"remove stale members with `talosctl -n CP etcd remove-member ID`; for a missing control plane check `talosctl -n NODE service etcd` and its logs; a learner is promoted once it has caught up")
	}
	return backupResult(ctx, env, evidence)
}

// checkProviderID verifies that every node's providerID is hcloud://: the
// hcloud CCM only manages routes and load balancer targets for those.
func checkProviderID(ctx context.Context, env *Env) Result {
	nodes, r, ok := fetch(ctx, env.Kube, noKube, KubeSource.Nodes, "the Kubernetes nodes")
	if !ok {
		return r
	}
	if len(nodes) == 0 {
		return skip("the cluster has no nodes yet")
	}
	var bad, unset, evidence []string
	for _, n := range nodes {
		switch {
		case strings.HasPrefix(n.ProviderID, "hcloud://"):
			evidence = append(evidence, fmt.Sprintf("%s: %s", n.Name, n.ProviderID))
		case n.ProviderID == "":
			unset = append(unset, n.Name+": providerID not set")
		default:
			bad = append(bad, fmt.Sprintf("%s: %s", n.Name, n.ProviderID))
		}
	}
	if len(bad) > 0 {
		return Result{Status: StatusFail, Evidence: append(append(bad, unset...), evidence...),
			Explanation: "the hcloud cloud controller manager only knows nodes whose providerID is hcloud://SERVER_ID. A node registered with another ID " +
				"(talos://metal/... when the kubelet starts without the external cloud provider) gets no routes and no load balancer targets, and the CCM cannot fix it: providerID is immutable.",
			Fix: "enable cluster.externalCloudProvider in the machine config (kubelet --cloud-provider=external), then delete the Node object (kubectl delete node NAME) " +
				"and reboot the node so it registers again and the CCM sets hcloud://"}
	}
	if len(unset) > 0 {
		return Result{Status: StatusWarn, Evidence: append(unset, evidence...),
			Explanation: "these nodes have no providerID yet: the hcloud CCM has not initialised them (they keep the node.cloudprovider.kubernetes.io/uninitialized taint)",
			Fix:         "check that hcloud-cloud-controller-manager runs and its token is valid (kubectl -n kube-system logs deploy/hcloud-cloud-controller-manager)"}
	}
	return pass(evidence...)
}
