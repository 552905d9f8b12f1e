package doctor

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
)

const noTalos = "no talosconfig: the cluster's Talos API is not available to the doctor"

// checkVIPLink verifies that the VIP is configured on a link that exists on
// every control plane and is the private one: Talos silently ignores a VIP on
// a link that does not exist (field notes, pitfall 1).
func checkVIPLink(ctx context.Context, env *Env) Result {
	if env.Talos == nil {
		return skip(noTalos)
	}
	if len(env.ControlPlanes) == 0 {
		return skip("no control planes known")
	}
	var evidence, problems, fixes []string
	wrong := map[string][]string{} // suggested link -> control planes to fix
	warn := false
	configured := 0
	for _, cp := range env.ControlPlanes {
		node := talosNode(cp)
		link, vip, err := env.Talos.VIPConfig(ctx, node)
		if err != nil {
			return sourceError("the VIP config of "+cp.Name, err)
		}
		if link == "" && vip == "" {
			if env.VIP != "" {
				problems = append(problems, fmt.Sprintf("%s: no VIP in the machine config (expected %s)", cp.Name, env.VIP))
				fixes = append(fixes, fmt.Sprintf("add the HCloudVIPConfig for %s to %s's machine config", env.VIP, cp.Name))
			}
			continue
		}
		configured++
		links, err := env.Talos.Links(ctx, node)
		if err != nil {
			return sourceError("the links of "+cp.Name, err)
		}
		addrs, err := env.Talos.Addresses(ctx, node)
		if err != nil {
			return sourceError("the addresses of "+cp.Name, err)
		}
		priv := privateLinks(addrs, cp.PrivateIP, env.PrivateCIDR)
		evidence = append(evidence, fmt.Sprintf("%s: VIP %s on link %q; links present: %s; private network on: %s",
			cp.Name, vip, link, linkNames(links), orNone(priv)))
		l, ok := findLink(links, link)
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s: link %q does not exist", cp.Name, link))
			wrong[fixVIPLinkTarget(priv)] = append(wrong[fixVIPLinkTarget(priv)], cp.Name)
		case len(priv) > 0 && !containsFold(priv, link):
			problems = append(problems, fmt.Sprintf("%s: link %q is not the private link (%s)", cp.Name, link, strings.Join(priv, ", ")))
			wrong[fixVIPLinkTarget(priv)] = append(wrong[fixVIPLinkTarget(priv)], cp.Name)
		case !l.Up:
			warn = true
			evidence = append(evidence, fmt.Sprintf("%s: link %q is down", cp.Name, link))
		}
		if ip, err := netip.ParseAddr(vip); err == nil {
			if p, perr := netip.ParsePrefix(env.PrivateCIDR); perr == nil && !p.Masked().Contains(ip) {
				problems = append(problems, fmt.Sprintf("%s: VIP %s is outside the control-plane subnet %s", cp.Name, vip, env.PrivateCIDR))
				fixes = append(fixes, fmt.Sprintf("choose a VIP inside %s that no server uses", env.PrivateCIDR))
			}
		}
		if env.VIP != "" && vip != env.VIP {
			warn = true
			evidence = append(evidence, fmt.Sprintf("%s: VIP %s differs from the spec's %s", cp.Name, vip, env.VIP))
		}
		if env.VIPLink != "" && link != env.VIPLink {
			warn = true
			evidence = append(evidence, fmt.Sprintf("%s: VIP link %q differs from the spec's %q", cp.Name, link, env.VIPLink))
		}
	}
	if configured == 0 && len(problems) == 0 {
		return skip("no VIP is configured on any control plane")
	}
	for _, target := range sortedKeys(keysOf(wrong)) {
		nodes := strings.Join(wrong[target], ", ")
		if target == "" {
			fixes = append(fixes, fmt.Sprintf("attach %s to the private network, then set the VIP link to the private interface", nodes))
		} else {
			fixes = append(fixes, fmt.Sprintf("set the VIP link of %s to %q (the link carrying the private IP)", nodes, target))
		}
	}
	if len(problems) > 0 {
		return failed(problems, evidence,
			"Talos silently ignores a VIP configured on a link that does not exist, so no control plane ever claims it. "+
				"On Hetzner, Talos boots with net.ifnames=0: the public NIC is eth0 and the private one eth1 (eth0 when there is no public IP); "+
				"enp1s0/enp7s0 are the Debian names of the same NICs. The symptom is Cilium agents logging `dial tcp VIP:6443: i/o timeout`.",
			strings.Join(uniq(fixes), "; ")+"; and point Cilium's k8sServiceHost at KubePrism (localhost:7445) so nothing in the cluster depends on the VIP")
	}
	if warn {
		return Result{Status: StatusWarn, Evidence: evidence,
			Explanation: "the VIP link exists, but the node state differs from what the spec expects",
			Fix:         "re-apply the machine configs generated from the spec (ohmytalos apply), or update the spec to match"}
	}
	return pass(evidence...)
}

// fixVIPLinkTarget is the link a VIP should move to: the private one, or ""
// when the node has no private address at all.
func fixVIPLinkTarget(priv []string) string {
	if len(priv) == 0 {
		return ""
	}
	return priv[0]
}

func keysOf(m map[string][]string) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

// checkVIPClaimed verifies that exactly one control plane holds the VIP.
func checkVIPClaimed(ctx context.Context, env *Env) Result {
	if env.Talos == nil {
		return skip(noTalos)
	}
	if len(env.ControlPlanes) == 0 {
		return skip("no control planes known")
	}
	vip, link := env.VIP, env.VIPLink
	if vip == "" {
		l, v, err := env.Talos.VIPConfig(ctx, talosNode(env.ControlPlanes[0]))
		if err != nil {
			return sourceError("the VIP config of "+env.ControlPlanes[0].Name, err)
		}
		vip, link = v, l
	}
	want, err := netip.ParseAddr(vip)
	if vip == "" {
		return skip("no VIP is configured")
	}
	if err != nil {
		return Result{Status: StatusFail, Evidence: []string{"VIP: " + vip},
			Explanation: fmt.Sprintf("the VIP %q is not an IP address", vip),
			Fix:         "set the VIP to a free IPv4 in the control-plane subnet"}
	}
	var holders, evidence []string
	for _, cp := range env.ControlPlanes {
		addrs, err := env.Talos.Addresses(ctx, talosNode(cp))
		if err != nil {
			return sourceError("the addresses of "+cp.Name, err)
		}
		for _, a := range addrs {
			if ip, ok := addrIP(a.CIDR); ok && ip == want {
				holders = append(holders, cp.Name)
				evidence = append(evidence, fmt.Sprintf("%s holds %s on %s", cp.Name, vip, a.Link))
				if link != "" && a.Link != link {
					evidence = append(evidence, fmt.Sprintf("%s: expected on %s", cp.Name, link))
				}
			}
		}
	}
	switch {
	case len(holders) == 0:
		return Result{
			Status:   StatusFail,
			Evidence: []string{fmt.Sprintf("no control plane (%s) has %s assigned", nodeNames(env.ControlPlanes), vip)},
			Explanation: "nobody answers on the VIP, so kubectl through the VIP and anything pointed at it (Cilium's k8sServiceHost) times out. " +
				"Talos claims the VIP only once etcd is healthy, and never when the VIP's link does not exist.",
			Fix: "run the vip-link and etcd checks: fix the VIP link in the machine config, make sure etcd is healthy (talosctl etcd members), " +
				"and keep in-cluster clients on KubePrism (localhost:7445)",
		}
	case len(holders) > 1:
		return Result{
			Status:      StatusFail,
			Evidence:    evidence,
			Explanation: fmt.Sprintf("the VIP %s is assigned on %d control planes at once: connections go to whichever answers, and failover is broken", vip, len(holders)),
			Fix:         "check that every control plane uses HCloudVIPConfig (a plain layer-2 VIP does not work on Hetzner networks) and that its Hetzner API token is valid, then reboot the extra holders one at a time",
		}
	}
	return pass(evidence...)
}

func nodeNames(ns []NodeRef) string {
	names := make([]string, len(ns))
	for i, n := range ns {
		names[i] = n.Name
	}
	return strings.Join(names, ", ")
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

func uniq(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
