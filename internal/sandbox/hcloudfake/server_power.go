package hcloudfake

import (
	"maps"
	"slices"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud/schema"
)

// boot powers a server on; callers hold f.mu. A pending rescue boot is
// consumed: Hetzner disables rescue mode once the server booted into it.
func (f *Fake) boot(ss *serverState) {
	ss.s.Status = "running"
	ss.inRescue = ss.s.RescueEnabled
	ss.s.RescueEnabled = false
	info := f.serverInfo(ss)
	f.hookQueue = append(f.hookQueue, func(h Hooks) { h.ServerPoweredOn(info) })
}

// halt powers a server off; callers hold f.mu.
func (f *Fake) halt(ss *serverState) {
	// Only a booted server (running, or stopping from running) was powered on.
	wasOn := ss.s.Status == "running" || ss.s.Status == "stopping"
	ss.s.Status = "off"
	ss.inRescue = false
	if wasOn {
		id := ss.s.ID
		f.hookQueue = append(f.hookQueue, func(h Hooks) { h.ServerPoweredOff(id) })
	}
}

// deleteServer removes a server and what depends on it; callers hold f.mu.
func (f *Fake) deleteServer(ss *serverState, now time.Time) *action {
	id := ss.s.ID
	f.halt(ss)
	f.releasePrimaryIPs(ss)
	delete(f.servers, id)
	for _, fw := range f.firewalls {
		fw.AppliedTo = slices.DeleteFunc(fw.AppliedTo, func(r schema.FirewallResource) bool {
			return r.Type == "server" && r.Server != nil && r.Server.ID == id
		})
	}
	for _, lb := range f.lbs {
		lb.Targets = slices.DeleteFunc(lb.Targets, func(t schema.LoadBalancerTarget) bool {
			return t.Type == "server" && t.Server != nil && t.Server.ID == id
		})
	}
	for _, v := range f.volumes {
		if v.Server != nil && *v.Server == id {
			v.Server = nil
		}
	}
	f.hookQueue = append(f.hookQueue, func(h Hooks) { h.ServerDeleted(id) })
	return f.newAction("delete_server", now, ref("server", id))
}

// renderServer returns the API view of a server with its relations.
func (f *Fake) renderServer(ss *serverState) schema.Server {
	s := ss.s
	s.Labels = maps.Clone(s.Labels)
	s.PrivateNet = slices.Clone(s.PrivateNet)
	s.PublicNet.FloatingIPs = []int64{}
	s.PublicNet.Firewalls = []schema.ServerFirewall{}
	for _, fwID := range slices.Sorted(maps.Keys(f.firewalls)) {
		if f.firewallAppliesTo(f.firewalls[fwID], ss) {
			s.PublicNet.Firewalls = append(s.PublicNet.Firewalls, schema.ServerFirewall{ID: fwID, Status: "applied"})
		}
	}
	s.Volumes = []int64{}
	for _, vid := range slices.Sorted(maps.Keys(f.volumes)) {
		if v := f.volumes[vid]; v.Server != nil && *v.Server == ss.s.ID {
			s.Volumes = append(s.Volumes, vid)
		}
	}
	s.LoadBalancers = []int64{}
	for _, lbID := range slices.Sorted(maps.Keys(f.lbs)) {
		for _, t := range f.resolveTargets(f.lbs[lbID]) {
			if t.Server != nil && t.Server.ID == ss.s.ID {
				s.LoadBalancers = append(s.LoadBalancers, lbID)
				break
			}
		}
	}
	if ss.pgroup != 0 {
		if pg, ok := f.pgroups[ss.pgroup]; ok {
			r := f.renderPlacementGroup(pg)
			s.PlacementGroup = &r
		}
	}
	return s
}
