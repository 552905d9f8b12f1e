package loadbalancer

import (
	"slices"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/reconcile"
)

// Diff is how a live load balancer differs from Want. Everything but
// Location can change in place.
type Diff struct {
	Type     string // the wanted type when it differs; "" when equal
	Location string // the wanted location when it differs: needs a new load balancer
	Services ServiceDiff
	Targets  TargetDiff
	Network  *hcloud.Network // the network to attach; nil when attached
	Labels   reconcile.LabelDiff
}

// ServiceDiff lists the services to change by listen port: Add and
// Update in Want.Ports order, Delete in the live load balancer's order.
type ServiceDiff struct {
	Add, Update, Delete []int
}

// Empty reports whether no service changes.
func (d ServiceDiff) Empty() bool { return len(d.Add)+len(d.Update)+len(d.Delete) == 0 }

// ServiceOp is one service change.
type ServiceOp struct {
	Port int
	Kind OpKind
}

// OpKind says whether a service is added, updated or deleted.
type OpKind int

// The service changes.
const (
	OpAdd OpKind = iota + 1
	OpUpdate
	OpDelete
)

// Ops lists the changes in the order they are made: the added and updated
// ports in the order of ports (Want.Ports), then the deleted ones.
func (d ServiceDiff) Ops(ports []int) []ServiceOp {
	var out []ServiceOp
	for _, p := range ports {
		switch {
		case slices.Contains(d.Add, p):
			out = append(out, ServiceOp{Port: p, Kind: OpAdd})
		case slices.Contains(d.Update, p):
			out = append(out, ServiceOp{Port: p, Kind: OpUpdate})
		}
	}
	for _, p := range d.Delete {
		out = append(out, ServiceOp{Port: p, Kind: OpDelete})
	}
	return out
}

// TargetDiff is the label-selector target to add (over private IPs; ""
// when present) and the public-IP targets of the same selector to remove
// first.
type TargetDiff struct {
	Add    string
	Remove []string
}

// Empty reports whether the targets need no change.
func (d TargetDiff) Empty() bool { return d.Add == "" && len(d.Remove) == 0 }

// InPlace reports whether d has changes Hetzner makes in place.
func (d Diff) InPlace() bool {
	return d.Type != "" || !d.Services.Empty() || !d.Targets.Empty() || d.Network != nil || !d.Labels.Empty()
}

// Empty reports whether the load balancer is as wanted.
func (d Diff) Empty() bool { return !d.InPlace() && d.Location == "" }

// Plan compares a live load balancer with w: its type, location,
// services, target, network and labels; services and target only when
// ohmytalos owns them (Want.ServicesBy empty). Labels someone else added
// (the cloud controller's hcloud-ccm/service-uid) are no drift.
func (s *Service) Plan(lb *hcloud.LoadBalancer, w Want) Diff {
	var d Diff
	if lb.LoadBalancerType != nil && lb.LoadBalancerType.Name != w.Type {
		d.Type = w.Type
	}
	if lb.Location != nil && w.Location != "" && lb.Location.Name != w.Location {
		d.Location = w.Location
	}
	if w.Managed() {
		d.Services = planServices(lb, w.Ports)
		if !HasTarget(lb, w.Target) {
			d.Targets.Add = w.Target
			d.Targets.Remove = publicTargets(lb, w.Target)
		}
	} else {
		// Handing over: ohmytalos's own label-selector target (left from
		// when it owned the targets) goes, so that the controller's server
		// targets are the only ones; its services the controller rewrites.
		d.Targets.Remove = selectorTargets(lb, w.Target)
	}
	if w.Network != nil && !inNetwork(lb, w.Network) {
		d.Network = w.Network
	}
	d.Labels = reconcile.DiffLabels(lb.Labels, w.Labels)
	return d
}

func planServices(lb *hcloud.LoadBalancer, ports []int) ServiceDiff {
	var d ServiceDiff
	for _, p := range ports {
		have, ok := ServiceOn(lb, p)
		switch {
		case !ok:
			d.Add = append(d.Add, p)
		case !sameService(have, WantService(p)):
			d.Update = append(d.Update, p)
		}
	}
	for _, sv := range lb.Services {
		if !slices.Contains(ports, sv.ListenPort) {
			d.Delete = append(d.Delete, sv.ListenPort)
		}
	}
	return d
}

func sameService(a, b hcloud.LoadBalancerService) bool {
	return a.Protocol == b.Protocol && a.ListenPort == b.ListenPort && a.DestinationPort == b.DestinationPort &&
		a.Proxyprotocol == b.Proxyprotocol && a.HealthCheck.Protocol == b.HealthCheck.Protocol && a.HealthCheck.Port == b.HealthCheck.Port &&
		a.HealthCheck.Interval == b.HealthCheck.Interval && a.HealthCheck.Timeout == b.HealthCheck.Timeout && a.HealthCheck.Retries == b.HealthCheck.Retries
}

// ServiceOn returns the load balancer's service on listen port.
func ServiceOn(lb *hcloud.LoadBalancer, port int) (hcloud.LoadBalancerService, bool) {
	for _, sv := range lb.Services {
		if sv.ListenPort == port {
			return sv, true
		}
	}
	return hcloud.LoadBalancerService{}, false
}

// HasTarget reports whether the load balancer targets selector over
// private IPs.
func HasTarget(lb *hcloud.LoadBalancer, selector string) bool {
	return slices.ContainsFunc(lb.Targets, func(t hcloud.LoadBalancerTarget) bool {
		return t.Type == hcloud.LoadBalancerTargetTypeLabelSelector && t.LabelSelector != nil && t.LabelSelector.Selector == selector && t.UsePrivateIP
	})
}

// publicTargets lists selector once per target of it over public IPs.
func publicTargets(lb *hcloud.LoadBalancer, selector string) []string {
	var out []string
	for _, t := range lb.Targets {
		if t.LabelSelector != nil && t.LabelSelector.Selector == selector && !t.UsePrivateIP {
			out = append(out, selector)
		}
	}
	return out
}

// selectorTargets lists selector once per target of it, over private or
// public IPs.
func selectorTargets(lb *hcloud.LoadBalancer, selector string) []string {
	var out []string
	for _, t := range lb.Targets {
		if t.Type == hcloud.LoadBalancerTargetTypeLabelSelector && t.LabelSelector != nil && t.LabelSelector.Selector == selector {
			out = append(out, selector)
		}
	}
	return out
}

func inNetwork(lb *hcloud.LoadBalancer, netw *hcloud.Network) bool {
	return slices.ContainsFunc(lb.PrivateNet, func(pn hcloud.LoadBalancerPrivateNet) bool {
		return pn.Network != nil && pn.Network.ID == netw.ID
	})
}
