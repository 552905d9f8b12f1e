package spec

import (
	"fmt"
	"net/netip"
	"regexp"
	"sort"
	"strings"
)

var (
	dnsLabel      = regexp.MustCompile(`^[a-z]([a-z0-9-]*[a-z0-9])?$`)
	talosVersion  = regexp.MustCompile(`^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`)
	kubeVersion   = regexp.MustCompile(`^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`)
	extensionName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*/[a-z0-9][a-z0-9._-]*$`)
	taintRe       = regexp.MustCompile(`^([A-Za-z0-9./_-]+)(=([A-Za-z0-9._-]*))?:(NoSchedule|PreferNoSchedule|NoExecute)$`)
	labelKey      = regexp.MustCompile(`^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`)
	serverTypeRe  = regexp.MustCompile(`^[a-z]+[0-9]+[a-z]*$`)
)

var lbTypes = map[string]bool{"lb11": true, "lb21": true, "lb31": true}

var providers = map[string]bool{"env": true, "bw": true, "bws": true}

// Validate returns every problem of a defaulted spec at once.
func (s *Spec) Validate() Problems {
	var ps Problems
	add := func(field, reason, fix string) { ps = append(ps, Problem{field, reason, fix}) }
	ps = append(ps, s.Upgrade.validate()...)

	switch {
	case s.Name == "":
		add("name", "is required", `set a short lowercase name, e.g. "name: demo"`)
	case len(s.Name) > 30 || !dnsLabel.MatchString(s.Name):
		add("name", fmt.Sprintf("%q is not a lowercase DNS label of at most 30 characters", Shorten(s.Name)),
			"use lowercase letters, digits and '-', starting with a letter, e.g. \"prod-eu\"")
	}
	if !talosVersion.MatchString(s.Talos.Version) {
		add("talos.version", fmt.Sprintf("%q is not a Talos release version", s.Talos.Version), `use the form "v1.13.9"`)
	}
	if !kubeVersion.MatchString(s.Kubernetes.Version) {
		add("kubernetes.version", fmt.Sprintf("%q is not a Kubernetes version", s.Kubernetes.Version),
			fmt.Sprintf(`use the form "%s", or omit it for the Talos release's default`, DefaultKubernetesVersion))
	}
	s.validateLocation("location", s.Location, add)
	s.validateNetwork(add)
	s.validateControlPlane(add)
	s.validateTotals(add)
	if ps.Has("pools") {
		// Too big to walk: every pool's and node's check would only
		// repeat it, at the cost of minutes for thousands of pools.
		return ps.bounded()
	}
	s.validatePools(add)
	s.validatePatches(add)
	if !ps.Has("network.cidr") && !ps.Has("network.pods") && !ps.Has("network.services") && !ps.Has("controlPlane.subnet") && !ps.Has("controlPlane.vip") {
		for _, p := range s.layoutProblems() {
			if !ps.Has(p.Field) {
				ps = append(ps, p)
			}
		}
	}
	if !lbTypes[s.LoadBalancer.Type] {
		add("loadBalancer.type", fmt.Sprintf("%q is not a Hetzner load balancer type", s.LoadBalancer.Type), "use lb11, lb21 or lb31")
	}
	s.validateLocation("loadBalancer.location", s.LoadBalancer.Location, add)
	if s.Endpoint.Mode != EndpointVIP && s.Endpoint.Mode != EndpointLoadBalancer {
		add("endpoint.mode", fmt.Sprintf("%q is not an endpoint mode", s.Endpoint.Mode), `use "vip" (through Tailscale) or "loadbalancer"`)
	}
	s.validateAccess(add)
	for i, c := range s.Firewall.Allow {
		if _, err := netip.ParsePrefix(c); err != nil {
			add(fmt.Sprintf("firewall.allow[%d]", i), fmt.Sprintf("%q is not a CIDR", c), `write an address range such as "203.0.113.7/32"`)
		}
	}
	s.validateSchematic("schematics.controlPlane", s.Schematics.ControlPlane, add)
	s.validateSchematic("schematics.worker", s.Schematics.Worker, add)
	extra := make([]string, 0, len(s.Schematics.Extra))
	for k := range s.Schematics.Extra {
		extra = append(extra, k)
	}
	sort.Strings(extra)
	for _, k := range extra {
		s.validateSchematic("schematics.extra."+k, s.Schematics.Extra[k], add)
	}
	validateRef("secrets.hcloudToken", s.Secrets.HCloudToken, add)
	if s.Secrets.TailscaleAuthKey != nil {
		validateRef("secrets.tailscaleAuthKey", *s.Secrets.TailscaleAuthKey, add)
	}
	s.validateAddons(add)
	for i, d := range s.Domains {
		if d == "" || strings.ContainsAny(d, " /:") {
			add(fmt.Sprintf("domains[%d]", i), fmt.Sprintf("%q is not a domain name", d), `write a name such as "app.example.com"`)
		}
	}
	return ps.bounded()
}

func (s *Spec) validateLocation(field, loc string, add func(string, string, string)) {
	if _, ok := zoneOf[loc]; !ok {
		add(field, fmt.Sprintf("%q is not a Hetzner Cloud location", loc), "use one of "+strings.Join(Locations(), ", "))
		return
	}
	if s.Network.Zone != "" && zoneOf[loc] != s.Network.Zone {
		add(field, fmt.Sprintf("%s is in network zone %s, the network is in %s", loc, zoneOf[loc], s.Network.Zone),
			"use a location of the network's zone, or change network.zone")
	}
}

func (s *Spec) validateNetwork(add func(string, string, string)) {
	valid := map[string]bool{}
	for _, z := range zoneOf {
		valid[z] = true
	}
	if !valid[s.Network.Zone] {
		add("network.zone", fmt.Sprintf("%q is not a Hetzner network zone", s.Network.Zone), "use eu-central, us-east, us-west or ap-southeast")
	}
	for _, f := range []struct{ field, v string }{
		{"network.cidr", s.Network.CIDR}, {"network.pods", s.Network.Pods}, {"network.services", s.Network.Services},
	} {
		p, err := netip.ParsePrefix(f.v)
		switch {
		case err != nil:
			add(f.field, fmt.Sprintf("%q is not a CIDR range", f.v), `write it as ADDRESS/BITS, e.g. "10.0.0.0/16"`)
		case !p.Addr().Is4():
			add(f.field, fmt.Sprintf("%q is IPv6; this range must be IPv4", f.v), `use an IPv4 range, e.g. "10.0.0.0/16"`)
		}
	}
}

func (s *Spec) validateControlPlane(add func(string, string, string)) {
	cp := s.ControlPlane
	if cp.Count < 1 || cp.Count%2 == 0 || cp.Count > 9 {
		add("controlPlane.count", fmt.Sprintf("%d control planes cannot keep an etcd quorum well", cp.Count),
			"use an odd number: 3 for high availability (1 for a throwaway cluster)")
	}
	if !serverTypeRe.MatchString(cp.ServerType) {
		add("controlPlane.serverType", fmt.Sprintf("%q is not a Hetzner server type name", cp.ServerType), `use e.g. "cpx22" (at least 4 GB RAM)`)
	}
	s.validateLocation("controlPlane.location", cp.Location, add)
	if _, err := netip.ParsePrefix(cp.Subnet); err != nil {
		add("controlPlane.subnet", fmt.Sprintf("%q is not a CIDR range", cp.Subnet), `use a /24 inside network.cidr, e.g. "10.0.1.0/24"`)
	}
	if cp.VIP != "" {
		if _, err := netip.ParseAddr(cp.VIP); err != nil {
			add("controlPlane.vip", fmt.Sprintf("%q is not an IP address", cp.VIP), `use an address of the control-plane subnet, e.g. "10.0.1.100"`)
		}
	}
	if s.Endpoint.Mode == EndpointVIP && cp.VIP == "" {
		add("controlPlane.vip", "is required when endpoint.mode is vip", `set an address of the control-plane subnet, e.g. "10.0.1.100"`)
	}
	if cp.VIPLink != "" && !regexp.MustCompile(`^[a-z][a-z0-9]{1,14}$`).MatchString(cp.VIPLink) {
		add("controlPlane.vipLink", fmt.Sprintf("%q is not a Linux interface name", cp.VIPLink),
			`leave it empty: the tool picks the private link (eth1 on Talos' hcloud platform)`)
	}
}

func (s *Spec) validatePools(add func(string, string, string)) {
	seen := map[string]int{}
	for i, p := range s.Pools {
		f := func(k string) string { return fmt.Sprintf("pools[%d].%s", i, k) }
		switch {
		case !dnsLabel.MatchString(p.Name) || len(p.Name) > 20:
			add(f("name"), fmt.Sprintf("%q is not a lowercase DNS label of at most 20 characters", Shorten(p.Name)), `use e.g. "worker" or "storage"`)
		case p.Name == RoleControlPlane:
			add(f("name"), "controlplane is reserved for the control plane", `pick another name, e.g. "worker"`)
		default:
			if j, dup := seen[p.Name]; dup {
				add(f("name"), fmt.Sprintf("%q is also the name of pools[%d]", p.Name, j), "give every pool a unique name")
			}
			seen[p.Name] = i
		}
		if !serverTypeRe.MatchString(p.ServerType) {
			add(f("serverType"), fmt.Sprintf("%q is not a Hetzner server type name", p.ServerType), `use e.g. "cpx32" (8 GB RAM)`)
		}
		if p.Count < 0 || p.Count > 100 {
			add(f("count"), fmt.Sprintf("%d is out of range", p.Count), "use 0 to 100 servers per pool")
		}
		if _, err := netip.ParsePrefix(p.Subnet); err != nil {
			add(f("subnet"), fmt.Sprintf("%q is not a CIDR range", p.Subnet), "use a /24 inside network.cidr that no other pool uses")
		}
		s.validateLocation(f("location"), p.Location, add)
		if p.VolumeSize != 0 && (p.VolumeSize < 10 || p.VolumeSize > 10240) {
			add(f("volumeSize"), fmt.Sprintf("%d GB is outside Hetzner's volume sizes", p.VolumeSize), "use 0 (no volume) or 10 to 10240 GB")
		}
		keys := make([]string, 0, len(p.Labels))
		for k := range p.Labels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !labelKey.MatchString(k) || len(k) > 253 {
				add(f("labels."+k), "is not a valid Kubernetes label key", `use e.g. "example.com/tier"`)
			}
		}
		for j, t := range p.Taints {
			if !taintRe.MatchString(t) {
				add(fmt.Sprintf("pools[%d].taints[%d]", i, j), fmt.Sprintf("%q is not a taint", t),
					`write KEY[=VALUE]:EFFECT with effect NoSchedule, PreferNoSchedule or NoExecute, e.g. "dedicated=db:NoSchedule"`)
			}
		}
		if p.Storage && p.InLoadBalancer() {
			add(f("loadBalancer"), "a storage pool is excluded from external load balancers (node.kubernetes.io/exclude-from-external-load-balancers)",
				"remove loadBalancer: true from the storage pool, or make it a plain worker pool")
		}
		if p.Schematic != "worker" {
			if _, ok := s.Schematics.Extra[p.Schematic]; !ok {
				add(f("schematic"), fmt.Sprintf("no schematic %q under schematics.extra", p.Schematic),
					`use "worker", or define schematics.extra.`+p.Schematic)
			}
		}
	}
}

func (s *Spec) validateSchematic(field string, sc Schematic, add func(string, string, string)) {
	for i, e := range sc.Extensions {
		if !extensionName.MatchString(e) {
			add(fmt.Sprintf("%s.extensions[%d]", field, i), fmt.Sprintf("%q is not an extension name", e),
				`use the official name, e.g. "siderolabs/tailscale"`)
		}
	}
}

func validateRef(field string, r SecretRef, add func(string, string, string)) {
	if !providers[r.Provider] {
		add(field+".provider", fmt.Sprintf("%q is not a secret provider", r.Provider),
			"use env (a variable), bw (Vaultwarden/Bitwarden item) or bws (Bitwarden Secrets Manager)")
	}
	if r.Ref == "" {
		add(field+".ref", "is required", "name the variable (env) or the item/secret ID (bw, bws)")
	}
	if r.Provider == "env" && r.Ref != "" && !regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`).MatchString(r.Ref) {
		add(field+".ref", fmt.Sprintf("%q is not an environment variable name", r.Ref), `use e.g. "HCLOUD_TOKEN"`)
	}
}
