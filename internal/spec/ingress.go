package spec

// Ingress is the ingress add-on (issue 20): Traefik from its upstream
// chart, its LoadBalancer Service bound to the ingress load balancer
// ohmytalos creates, whose services and targets the hcloud cloud
// controller then manages. With it off, ohmytalos keeps reconciling the
// load balancer's services (80, 443) and its label-selector target, and
// nothing answers behind it until the operator runs an ingress.
//
// It is an Addon: enabled, version (the Traefik release, default
// DefaultIngressVersion), chart, values and managed work as for the others.
type Ingress = Addon

// DefaultIngressVersion is the Traefik release the ingress add-on's pinned
// chart ships.
const DefaultIngressVersion = traefikRelease

// HasLoadBalancerPool reports whether a pool's nodes are targets of the
// ingress load balancer.
func (s *Spec) HasLoadBalancerPool() bool {
	for _, p := range s.Pools {
		if p.InLoadBalancer() {
			return true
		}
	}
	return false
}

// defaultIngress switches the ingress on when a pool is a load balancer
// target and the cloud controller, which takes over the load balancer's
// services and targets, runs; it runs after the pools' own defaults
// (loadBalancer: true on every pool but storage pools) and the other
// add-ons'.
func (s *Spec) defaultIngress() {
	if s.Addons.Ingress.Enabled == nil {
		s.Addons.Ingress.Enabled = boolPtr(s.HasLoadBalancerPool() && s.Addons.HCloudCCM.On())
	}
}

// validateIngress refuses the combinations that leave the ingress load
// balancer without anyone to manage it or without targets.
func (s *Spec) validateIngress(add func(field, reason, fix string)) {
	if !s.Addons.Ingress.On() {
		return
	}
	if !s.Addons.HCloudCCM.On() {
		add("addons.ingress.enabled", "the ingress hands the load balancer's services and targets to the hcloud cloud controller, which is switched off",
			"switch addons.hcloudCCM on, or set addons.ingress.enabled: false and manage the load balancer's services yourself")
	}
	if !s.HasLoadBalancerPool() {
		add("addons.ingress.enabled", "no pool has loadBalancer: true, so the cloud controller would find no node to target",
			"set loadBalancer: true on a worker pool, or set addons.ingress.enabled: false")
	}
}
