package kubefake

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
)

// The hcloud CCM's Service annotations and finalizer
// (hetznercloud/hcloud-cloud-controller-manager internal/annotation;
// k8s.io/cloud-provider service controller).
const (
	annLBName       = "load-balancer.hetzner.cloud/name"
	annLBLocation   = "load-balancer.hetzner.cloud/location"
	annLBZone       = "load-balancer.hetzner.cloud/network-zone"
	annLBType       = "load-balancer.hetzner.cloud/type"
	annLBPrivateIP  = "load-balancer.hetzner.cloud/use-private-ip"
	lbCleanup       = "service.kubernetes.io/load-balancer-cleanup"
	labelExcludeLBs = "node.kubernetes.io/exclude-from-external-load-balancers"
)

// lbWork is one LoadBalancer Service the CCM's service controller handles.
type lbWork struct {
	ns, name, lbName string
	uid              string
	location, typ    string
	zone             string
	private          bool
	remove           bool
	ports            [][2]int // listen port, node port
	servers          []int64
}

// lbWorkLocked collects the LoadBalancer Services to provision or clean up.
func (s *Server) lbWorkLocked(env cloudEnv) []lbWork {
	if env.vars["HCLOUD_LOAD_BALANCERS_ENABLED"] == "false" {
		return nil
	}

	var servers []int64

	for _, n := range s.sortedLocked("/nodes") {
		if _, excluded := strMap(n, "metadata", "labels")[labelExcludeLBs]; excluded {
			continue
		}

		if id, err := strconv.ParseInt(strings.TrimPrefix(str(n, "spec", "providerID"), "hcloud://"), 10, 64); err == nil {
			servers = append(servers, id)
		}
	}

	var out []lbWork

	for _, svc := range s.sortedLocked("/services") {
		if str(svc, "spec", "type") != "LoadBalancer" || s.now().Before(s.cloud.retry["lb/"+str(svc, "metadata", "uid")]) {
			continue
		}

		ann := strMap(svc, "metadata", "annotations")
		w := lbWork{
			ns: str(svc, "metadata", "namespace"), name: str(svc, "metadata", "name"),
			lbName: ann[annLBName], uid: str(svc, "metadata", "uid"),
			location: ann[annLBLocation], zone: ann[annLBZone], typ: ann[annLBType],
			private: ann[annLBPrivateIP] == "true" || env.vars["HCLOUD_LOAD_BALANCERS_USE_PRIVATE_IP"] == "true",
			remove:  str(svc, "metadata", "deletionTimestamp") != "",
			servers: servers,
		}

		if w.lbName == "" {
			// cloudprovider.DefaultLoadBalancerName: "a" + the UID without dashes.
			w.lbName = "a" + strings.ReplaceAll(str(svc, "metadata", "uid"), "-", "")
		}

		if _, set := ann[annLBLocation]; !set {
			w.location = env.vars["HCLOUD_LOAD_BALANCERS_LOCATION"]
		}

		if _, set := ann[annLBZone]; !set {
			w.zone = env.vars["HCLOUD_LOAD_BALANCERS_NETWORK_ZONE"]
		}

		if w.typ == "" {
			w.typ = "lb11"
		}

		for _, p := range listAt(svc, "spec", "ports") {
			port, _ := intAt(p, "port")
			node, _ := intAt(p, "nodePort")
			w.ports = append(w.ports, [2]int{int(port), int(node)})
		}

		synced := s.cloud.lbTargets[str(svc, "metadata", "uid")] == targetsKey(servers)
		if w.remove || len(listAt(svc, "status", "loadBalancer", "ingress")) == 0 || !synced {
			out = append(out, w)
		}
	}

	return out
}

// lbResult is the outcome for one Service.
type lbResult struct {
	ns, name string
	ingress  []string
	removed  bool
	failed   bool
	// err is the service controller's error for a failed sync, recorded
	// as the Service's SyncLoadBalancerFailed event.
	err     string
	targets string
}

// The hcloud CCM's errors, as EnsureLoadBalancer wraps them
// (hetznercloud/hcloud-cloud-controller-manager hcloud/load_balancers.go,
// internal/hcops/load_balancer.go: LoadBalancerOps.Create refuses without
// a location or network zone; ReconcileHCLBTargets refuses use-private-ip
// without a network).
const (
	errEnsureLB   = "hcloud/loadBalancers.EnsureLoadBalancer: "
	errNoLocation = errEnsureLB + "hcops/LoadBalancerOps.Create: neither " + annLBLocation + " nor " + annLBZone + " set"
	errNoNetwork  = errEnsureLB + "hcops/LoadBalancerOps.ReconcileHCLBTargets: use private ip: missing network id"
)

func targetsKey(ids []int64) string {
	s := slices.Clone(ids)
	slices.Sort(s)

	return fmt.Sprint(s)
}

func syncTargets(ctx context.Context, c *hcloud.Client, lb *hcloud.LoadBalancer, w lbWork, networkID int64) bool {
	have := map[int64]bool{}

	for _, t := range lb.Targets {
		if t.Type == hcloud.LoadBalancerTargetTypeServer && t.Server != nil && t.Server.Server != nil {
			have[t.Server.Server.ID] = true
		}
	}

	for _, id := range w.servers {
		if !have[id] {
			opts := hcloud.LoadBalancerAddServerTargetOpts{Server: &hcloud.Server{ID: id}, UsePrivateIP: hcloud.Ptr(w.private && networkID != 0)}
			if _, _, err := c.LoadBalancer.AddServerTarget(ctx, lb, opts); err != nil {
				return false
			}
		}

		delete(have, id)
	}

	for id := range have {
		if _, _, err := c.LoadBalancer.RemoveServerTarget(ctx, lb, &hcloud.Server{ID: id}); err != nil {
			return false
		}
	}

	return true
}

// ensureLB creates (or finds) the Service's load balancer, or deletes it.
func ensureLB(ctx context.Context, c *hcloud.Client, networkID int64, w lbWork) lbResult {
	res := lbResult{ns: w.ns, name: w.name}

	lb, _, err := c.LoadBalancer.GetByName(ctx, w.lbName)
	if err != nil {
		res.failed = true

		return res
	}

	if w.remove {
		if lb != nil {
			if _, err := c.LoadBalancer.Delete(ctx, lb); err != nil {
				res.failed = true

				return res
			}
		}

		res.removed = true

		return res
	}

	if lb == nil {
		if w.location == "" && w.zone == "" {
			res.failed, res.err = true, errNoLocation

			return res
		}

		if lb, err = createLB(ctx, c, networkID, w); err != nil || lb == nil {
			res.failed = true

			return res
		}
	}

	if w.private && networkID == 0 {
		res.failed, res.err = true, errNoNetwork

		return res
	}

	// ReconcileHCLB's label and ReconcileHCLBServices: an adopted load
	// balancer gets the Service's UID label and its services, whatever it
	// had (hcloud-cloud-controller-manager internal/hcops/load_balancer.go).
	if !claimLB(ctx, c, lb, w) || !syncServices(ctx, c, lb, w) {
		res.failed = true

		return res
	}

	// The service controller's node sync: targets follow the nodes.
	if !syncTargets(ctx, c, lb, w, networkID) {
		res.failed = true

		return res
	}

	res.targets = targetsKey(w.servers)

	if ip := lb.PublicNet.IPv4.IP; ip != nil {
		res.ingress = append(res.ingress, ip.String())
	}

	return res
}

// claimLB sets the hcloud-ccm/service-uid label, keeping the others
// (changeHCLBInfo).
func claimLB(ctx context.Context, c *hcloud.Client, lb *hcloud.LoadBalancer, w lbWork) bool {
	if w.uid == "" || lb.Labels[ccmServiceUID] == w.uid {
		return true
	}

	labels := map[string]string{ccmServiceUID: w.uid}
	for k, v := range lb.Labels {
		if k != ccmServiceUID {
			labels[k] = v
		}
	}

	_, _, err := c.LoadBalancer.Update(ctx, lb, hcloud.LoadBalancerUpdateOpts{Labels: labels})

	return err == nil
}

// ccmServiceUID is the label the CCM puts on the load balancers it
// manages (internal/hcops/load_balancer.go, LabelServiceUID).
const ccmServiceUID = "hcloud-ccm/service-uid"

// syncServices makes the load balancer's services the Service's ports:
// listen port -> node port, a TCP health check on the node port; every
// other service is deleted (ReconcileHCLBServices).
func syncServices(ctx context.Context, c *hcloud.Client, lb *hcloud.LoadBalancer, w lbWork) bool {
	have := map[int]hcloud.LoadBalancerService{}
	for _, sv := range lb.Services {
		have[sv.ListenPort] = sv
	}

	for _, p := range w.ports {
		hc := ccmHealthCheck(p[1])
		sv, ok := have[p[0]]
		delete(have, p[0])

		var err error

		switch {
		case !ok:
			_, _, err = c.LoadBalancer.AddService(ctx, lb, hcloud.LoadBalancerAddServiceOpts{Protocol: hcloud.LoadBalancerServiceProtocolTCP,
				ListenPort: hcloud.Ptr(p[0]), DestinationPort: hcloud.Ptr(p[1]), Proxyprotocol: hcloud.Ptr(false),
				HealthCheck: &hcloud.LoadBalancerAddServiceOptsHealthCheck{Protocol: hc.Protocol, Port: hc.Port, Interval: hc.Interval, Timeout: hc.Timeout, Retries: hc.Retries}})
		case sv.DestinationPort != p[1] || sv.HealthCheck.Port != p[1] || sv.Proxyprotocol:
			_, _, err = c.LoadBalancer.UpdateService(ctx, lb, p[0], hcloud.LoadBalancerUpdateServiceOpts{Protocol: hcloud.LoadBalancerServiceProtocolTCP,
				DestinationPort: hcloud.Ptr(p[1]), Proxyprotocol: hcloud.Ptr(false),
				HealthCheck: &hcloud.LoadBalancerUpdateServiceOptsHealthCheck{Protocol: hc.Protocol, Port: hc.Port, Interval: hc.Interval, Timeout: hc.Timeout, Retries: hc.Retries}})
		}

		if err != nil {
			return false
		}
	}

	for port := range have {
		if _, _, err := c.LoadBalancer.DeleteService(ctx, lb, port); err != nil {
			return false
		}
	}

	return true
}

// ccmHealthCheck is a service's health check as it ends up without
// health-check annotations: buildAddServiceOpts sends TCP on the node
// port and leaves interval, timeout and retries to Hetzner's defaults
// (15 s, 10 s, 3), which the sandbox's API requires spelled out.
func ccmHealthCheck(nodePort int) hcloud.LoadBalancerCreateOptsServiceHealthCheck {
	return hcloud.LoadBalancerCreateOptsServiceHealthCheck{Protocol: hcloud.LoadBalancerServiceProtocolTCP, Port: hcloud.Ptr(nodePort),
		Interval: hcloud.Ptr(15 * time.Second), Timeout: hcloud.Ptr(10 * time.Second), Retries: hcloud.Ptr(3)}
}

func createLB(ctx context.Context, c *hcloud.Client, networkID int64, w lbWork) (*hcloud.LoadBalancer, error) {
	opts := hcloud.LoadBalancerCreateOpts{
		Name: w.lbName, LoadBalancerType: &hcloud.LoadBalancerType{Name: w.typ},
		Labels: map[string]string{"hcloud-ccm/service-uid": strings.TrimPrefix(w.lbName, "a")},
	}

	if w.location != "" {
		opts.Location = &hcloud.Location{Name: w.location}
	} else {
		opts.NetworkZone = hcloud.NetworkZone(w.zone)
	}

	if w.private && networkID != 0 {
		opts.Network = &hcloud.Network{ID: networkID}
	}

	for _, p := range w.ports {
		opts.Services = append(opts.Services, hcloud.LoadBalancerCreateOptsService{
			Protocol: hcloud.LoadBalancerServiceProtocolTCP, ListenPort: hcloud.Ptr(p[0]), DestinationPort: hcloud.Ptr(p[1]),
			// The cloud controller always sends proxyprotocol and a TCP
			// health check on the node port (hcloud-cloud-controller-manager
			// internal/hcops/load_balancer.go, buildAddServiceOpts); the API
			// requires both.
			Proxyprotocol: hcloud.Ptr(false),
			HealthCheck: &hcloud.LoadBalancerCreateOptsServiceHealthCheck{
				Protocol: hcloud.LoadBalancerServiceProtocolTCP, Port: hcloud.Ptr(p[1]),
				Interval: hcloud.Ptr(15 * time.Second), Timeout: hcloud.Ptr(10 * time.Second), Retries: hcloud.Ptr(3),
			},
		})
	}

	res, _, err := c.LoadBalancer.Create(ctx, opts)
	if err != nil {
		return nil, err //nolint:wrapcheck // reported as a failed attempt
	}

	return res.LoadBalancer, nil
}

// applyLBLocked records load balancer results on the Services.
func (s *Server) applyLBLocked(results []lbResult) {
	svcRes := s.builtinLocked("services")

	for _, r := range results {
		old, ok := s.getLocked(svcRes, r.ns, r.name)
		if !ok {
			continue
		}

		svc := copyObj(old)
		fins := slices.DeleteFunc(slices.Clone(listAt(svc, "metadata", "finalizers")), func(f any) bool { return f == lbCleanup })

		switch {
		case r.failed:
			s.cloud.retry["lb/"+str(svc, "metadata", "uid")] = s.now().Add(5 * time.Second)

			if r.err != "" {
				// k8s.io/cloud-provider controllers/service/controller.go:
				// syncLoadBalancerIfNeeded wraps the error as "failed to
				// ensure load balancer: %w", then the controller records
				// Warning SyncLoadBalancerFailed "Error syncing load balancer: %v".
				s.recordEventLocked(old, "Warning", "SyncLoadBalancerFailed",
					"Error syncing load balancer: failed to ensure load balancer: "+r.err, "service-controller")
			}

			continue
		case r.removed:
			meta(svc)["finalizers"] = fins
			if len(fins) == 0 {
				delete(meta(svc), "finalizers")
			}

			if len(fins) == 0 && str(svc, "metadata", "deletionTimestamp") != "" {
				s.removeLocked(svcRes, svc)

				continue
			}
		default:
			s.cloud.lbTargets[str(svc, "metadata", "uid")] = r.targets
			meta(svc)["finalizers"] = append(fins, lbCleanup)

			var ing []any
			for _, ip := range r.ingress {
				ing = append(ing, obj{"ip": ip, "ipMode": "VIP"})
			}

			set(svc, obj{"ingress": ing}, "status", "loadBalancer")
		}

		s.saveLocked(svcRes, old, svc)
	}
}

// allocateNodePorts gives NodePort and LoadBalancer Service ports a node
// port from the default range 30000-32767.
func (s *Server) allocateNodePorts(o obj, old obj) {
	if t := str(o, "spec", "type"); t != "NodePort" && t != "LoadBalancer" {
		return
	}

	used := map[int64]bool{}

	for _, svc := range s.sortedLocked("/services") {
		for _, p := range listAt(svc, "spec", "ports") {
			if n, ok := intAt(p, "nodePort"); ok {
				used[n] = true
			}
		}
	}

	for i, p := range listAt(o, "spec", "ports") {
		pm, ok := p.(map[string]any)
		if !ok {
			continue
		}

		if _, has := intAt(pm, "nodePort"); has {
			continue
		}

		if old != nil && i < len(listAt(old, "spec", "ports")) {
			if n, ok := intAt(listAt(old, "spec", "ports")[i], "nodePort"); ok {
				pm["nodePort"] = num(n)

				continue
			}
		}

		for n := int64(30000); n <= 32767; n++ {
			if !used[n] {
				used[n] = true
				pm["nodePort"] = num(n)

				break
			}
		}
	}
}
