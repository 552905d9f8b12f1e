package steps

import (
	"context"
	"fmt"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// assumedServerLimit is the server limit many accounts start with; the
// API does not tell an account's limits (hetznercloud/hcloud-go#302), so
// without limits.servers in the spec it is only a warning. Reported
// figures: 10 servers (hcloud-go#302, hetzner-k3s#175), 5 on some new
// accounts (jikig-ai/soleur#6453).
const assumedServerLimit = 10

// count is one kind of resource: what the project holds, what of it is
// this cluster's, and what the spec wants the cluster to hold.
type count struct {
	kind, field      string
	project, cluster int
	want             int
}

// adds is what the plan creates of the kind.
func (c count) adds() int { return max(0, c.want-c.cluster) }

// census counts what the project holds against what the spec needs, with
// one list per kind (servers, primary IPs, volumes, placement groups).
type census struct {
	servers, primaryIPs, volumes, groups count
}

// takeCensus lists the project's servers, primary IPs, volumes and
// placement groups once each.
func takeCensus(ctx context.Context, c *hcloud.Client, sp *spec.Spec) (census, error) {
	ours := func(l map[string]string) bool { return l[cloud.LabelCluster] == sp.Name }
	servers, err := c.Server.All(ctx)
	if err != nil {
		return census{}, fmt.Errorf("pre-flight: list servers: %w", err)
	}
	ips, err := c.PrimaryIP.All(ctx)
	if err != nil {
		return census{}, fmt.Errorf("pre-flight: list primary IPs: %w", err)
	}
	vols, err := c.Volume.All(ctx)
	if err != nil {
		return census{}, fmt.Errorf("pre-flight: list volumes: %w", err)
	}
	pgs, err := c.PlacementGroup.All(ctx)
	if err != nil {
		return census{}, fmt.Errorf("pre-flight: list placement groups: %w", err)
	}
	perServer := 0
	if sp.PublicNetwork == nil || sp.PublicNetwork.IPv4 {
		perServer++
	}
	if sp.PublicNetwork == nil || sp.PublicNetwork.IPv6 {
		perServer++
	}
	cen := census{
		servers:    count{kind: "servers", field: "limits.servers", project: len(servers), want: sp.ServerCount()},
		primaryIPs: count{kind: "primary IPs", field: "limits.primaryIPs", project: len(ips), want: sp.ServerCount() * perServer},
		volumes:    count{kind: "volumes", field: "limits.volumes", project: len(vols), want: volumeCount(sp)},
		groups:     count{kind: "placement groups", field: "limits.placementGroups", project: len(pgs), want: sp.PlacementGroupCount()},
	}
	mine := map[int64]bool{}
	for _, s := range servers {
		if ours(s.Labels) {
			cen.servers.cluster++
			mine[s.ID] = true
		}
	}
	for _, ip := range ips {
		// Primary IPs made with a server carry no labels: they are the
		// cluster's when assigned to one of its servers.
		if ours(ip.Labels) || (ip.AssigneeID != 0 && mine[ip.AssigneeID]) {
			cen.primaryIPs.cluster++
		}
	}
	for _, v := range vols {
		if ours(v.Labels) {
			cen.volumes.cluster++
		}
	}
	for _, g := range pgs {
		if ours(g.Labels) {
			cen.groups.cluster++
		}
	}
	return cen, nil
}

// volumeCount is how many data volumes the pools attach (one per server of
// a pool with a volumeSize).
func volumeCount(sp *spec.Spec) int {
	n := 0
	for _, p := range sp.Pools {
		if p.VolumeSize > 0 {
			n += p.Count
		}
	}
	return n
}

// limitFindings compares what the project will hold after apply with the
// limits: those the spec states (errors), Hetzner's documented 50 placement
// groups per project (an error) and the usual server limit (a warning).
func (cen census) limitFindings(sp *spec.Spec) []Finding {
	var l spec.Limits
	if sp.Limits != nil {
		l = *sp.Limits
	}
	var fs []Finding
	for _, c := range []struct {
		count
		limit int
	}{{cen.servers, l.Servers}, {cen.primaryIPs, l.PrimaryIPs}, {cen.volumes, l.Volumes}, {cen.groups, l.PlacementGroups}} {
		if f, ok := c.exceeds(c.limit, SeverityError, fmt.Sprintf("the project's limit (%s in the spec)", c.field)); ok {
			fs = append(fs, f)
		}
	}
	if l.PlacementGroups == 0 {
		if f, ok := cen.groups.exceeds(spec.MaxPlacementGroups, SeverityError, "Hetzner's limit of placement groups per project"); ok {
			fs = append(fs, f)
		}
	}
	if l.Servers == 0 {
		if f, ok := cen.servers.exceeds(assumedServerLimit, SeverityWarning, "the limit many accounts start with (Hetzner's API does not tell yours)"); ok {
			f.Fix = fmt.Sprintf("look up your limit in the Cloud Console (Limits) and write it as limits.servers; ask Hetzner to raise it if %d is more", cen.servers.project+cen.servers.adds())
			fs = append(fs, f)
		}
	}
	return fs
}

// exceeds reports when the project would hold more than limit (0: none).
func (c count) exceeds(limit int, sev Severity, what string) (Finding, bool) {
	after := c.project + c.adds()
	if limit <= 0 || c.adds() == 0 || after <= limit {
		return Finding{}, false
	}
	return Finding{Check: CheckLimits, Severity: sev, Field: c.field,
		Reason: fmt.Sprintf("apply creates %d %s; with the %d the project holds that is %d, over %s of %d", c.adds(), c.kind, c.project, after, what, limit),
		Fix:    fmt.Sprintf("delete %d unused %s, ask Hetzner to raise the limit (Cloud Console, Limits), or lower the pools' counts", after-limit, c.kind),
	}, true
}
