package hcloudfake

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud/schema"
)

func (f *Fake) serveLoadBalancers(rq *request) (int, any, error) {
	switch {
	case len(rq.segs) == 1 && rq.method == http.MethodGet:
		items := make([]schema.LoadBalancer, 0, len(f.lbs))
		for _, lb := range f.lbs {
			items = append(items, f.renderLB(lb))
		}
		out, err := listResponse(rq.query, "load_balancers", items, accessor[schema.LoadBalancer]{
			id:     func(x schema.LoadBalancer) int64 { return x.ID },
			name:   func(x schema.LoadBalancer) string { return x.Name },
			labels: func(x schema.LoadBalancer) map[string]string { return x.Labels },
		})
		return http.StatusOK, out, err
	case len(rq.segs) == 1 && rq.method == http.MethodPost:
		return f.createLB(rq)
	case len(rq.segs) == 1:
		return 0, nil, errMethod(rq)
	}
	id, err := rq.idAt(1)
	if err != nil {
		return 0, nil, err
	}
	lb, ok := f.lbs[id]
	if !ok {
		return 0, nil, errNotFound("load balancer", id)
	}
	if len(rq.segs) == 4 && rq.segs[2] == "actions" && rq.method == http.MethodPost {
		return f.lbAction(rq, lb, rq.segs[3])
	}
	if len(rq.segs) != 2 {
		return 0, nil, errNoRoute(rq)
	}
	switch rq.method {
	case http.MethodGet:
		return http.StatusOK, map[string]any{"load_balancer": f.renderLB(lb)}, nil
	case http.MethodPut:
		var req schema.LoadBalancerUpdateRequest
		if err := rq.decode(&req); err != nil {
			return 0, nil, err
		}
		if req.Name != nil && *req.Name != lb.Name {
			if f.lbByName(*req.Name) != nil {
				return 0, nil, errUniqueness("name")
			}
			lb.Name = *req.Name
		}
		if req.Labels != nil {
			if err := checkLabels(*req.Labels); err != nil {
				return 0, nil, err
			}
			lb.Labels = maps.Clone(*req.Labels)
		}
		return http.StatusOK, map[string]any{"load_balancer": f.renderLB(lb)}, nil
	case http.MethodDelete:
		delete(f.lbs, id)
		return http.StatusOK, f.actionBody(f.newAction("delete_load_balancer", rq.now, ref("load_balancer", id)), rq.now), nil
	}
	return 0, nil, errMethod(rq)
}

func (f *Fake) lbByName(name string) *schema.LoadBalancer {
	for _, lb := range f.lbs {
		if lb.Name == name {
			return lb
		}
	}
	return nil
}

// service builds a service with Hetzner's defaults: http listens on 80 and
// https on 443, both forward to 80; the health check probes the destination
// port every 15 s with a 10 s timeout and 3 retries.
func service(protocol string, listen, dest *int, proxy *bool, hc *schema.LoadBalancerCreateRequestServiceHealthCheck) (schema.LoadBalancerService, error) {
	s := schema.LoadBalancerService{Protocol: protocol}
	switch protocol {
	case "http":
		s.ListenPort, s.DestinationPort = 80, 80
	case "https":
		s.ListenPort, s.DestinationPort = 443, 80
	case "tcp":
		if listen == nil || dest == nil {
			return s, errInvalid("services", "a tcp service needs listen_port and destination_port")
		}
	default:
		return s, errInvalid("services", fmt.Sprintf("protocol %q is not one of tcp, http, https", protocol))
	}
	if listen != nil {
		s.ListenPort = *listen
	}
	if dest != nil {
		s.DestinationPort = *dest
	}
	if proxy != nil {
		s.Proxyprotocol = *proxy
	}
	if protocol != "tcp" {
		s.HTTP = &schema.LoadBalancerServiceHTTP{CookieName: "HCLBSTICKY", CookieLifetime: 300, Certificates: []int64{}, TimeoutIdle: 60}
	}
	s.HealthCheck = &schema.LoadBalancerServiceHealthCheck{Protocol: "tcp", Port: s.DestinationPort, Interval: 15, Timeout: 10, Retries: 3}
	if hc != nil {
		s.HealthCheck.Protocol = hc.Protocol
		if hc.Port != nil {
			s.HealthCheck.Port = *hc.Port
		}
		if hc.Interval != nil {
			s.HealthCheck.Interval = *hc.Interval
		}
		if hc.Timeout != nil {
			s.HealthCheck.Timeout = *hc.Timeout
		}
		if hc.Retries != nil {
			s.HealthCheck.Retries = *hc.Retries
		}
	}
	return s, nil
}

func (f *Fake) addService(lb *schema.LoadBalancer, s schema.LoadBalancerService) error {
	if slices.ContainsFunc(lb.Services, func(x schema.LoadBalancerService) bool { return x.ListenPort == s.ListenPort }) {
		return errCode(http.StatusConflict, "source_port_already_used", fmt.Sprintf("listen port %d is already used by another service", s.ListenPort))
	}
	if len(lb.Services) >= lb.LoadBalancerType.MaxServices {
		return errCode(http.StatusForbidden, "resource_limit_exceeded", fmt.Sprintf("%s allows at most %d services", lb.LoadBalancerType.Name, lb.LoadBalancerType.MaxServices))
	}
	lb.Services = append(lb.Services, s)
	return nil
}

// attachLB attaches a load balancer to a network with an IP from its zone.
func (f *Fake) attachLB(lb *schema.LoadBalancer, networkID int64, want string) error {
	if slices.ContainsFunc(lb.PrivateNet, func(pn schema.LoadBalancerPrivateNet) bool { return pn.Network == networkID }) {
		return errCode(http.StatusConflict, "load_balancer_already_attached", fmt.Sprintf("load balancer %d is already attached to network %d", lb.ID, networkID))
	}
	ip, err := f.allocatePrivateIP(networkID, lb.Location.NetworkZone, want)
	if err != nil {
		return err
	}
	lb.PrivateNet = append(lb.PrivateNet, schema.LoadBalancerPrivateNet{Network: networkID, IP: ip})
	return nil
}

func (f *Fake) createLB(rq *request) (int, any, error) {
	var req schema.LoadBalancerCreateRequest
	if err := rq.decode(&req); err != nil {
		return 0, nil, err
	}
	if req.Name == "" {
		return 0, nil, errInvalid("name", "name is required")
	}
	if f.lbByName(req.Name) != nil {
		return 0, nil, errUniqueness("name")
	}
	lt, ok := f.cat.lbType(req.LoadBalancerType)
	if !ok {
		return 0, nil, errInvalid("load_balancer_type", fmt.Sprintf("load balancer type %s not found", idOrNameString(req.LoadBalancerType)))
	}
	var loc schema.Location
	switch {
	case req.Location != nil:
		loc = f.cat.location(*req.Location)
	case req.NetworkZone != nil:
		for _, l := range f.cat.locations {
			if l.NetworkZone == *req.NetworkZone {
				loc = l
				break
			}
		}
	default:
		return 0, nil, errInvalid("location", "either location or network_zone is required")
	}
	if loc.ID == 0 {
		return 0, nil, errInvalid("location", "location or network zone not found")
	}
	if req.Labels != nil {
		if err := checkLabels(*req.Labels); err != nil {
			return 0, nil, err
		}
	}
	algo := "round_robin"
	if req.Algorithm != nil && req.Algorithm.Type != "" {
		if req.Algorithm.Type != "round_robin" && req.Algorithm.Type != "least_connections" {
			return 0, nil, errInvalid("algorithm", fmt.Sprintf("algorithm %q is not round_robin or least_connections", req.Algorithm.Type))
		}
		algo = req.Algorithm.Type
	}
	lb := &schema.LoadBalancer{ID: f.nextID(), Name: req.Name, Location: loc, LoadBalancerType: lt,
		Labels: labelsOrEmpty(req.Labels), Created: rq.now.UTC().Truncate(time.Second), Algorithm: schema.LoadBalancerAlgorithm{Type: algo},
		IncludedTraffic: 20 * tib, PrivateNet: []schema.LoadBalancerPrivateNet{}, Services: []schema.LoadBalancerService{},
		Targets: []schema.LoadBalancerTarget{}}
	if req.Network != nil {
		if _, ok := f.networks[*req.Network]; !ok {
			return 0, nil, errInvalid("network", fmt.Sprintf("network %d not found", *req.Network))
		}
		if err := f.attachLB(lb, *req.Network, ""); err != nil {
			return 0, nil, err
		}
	}
	for _, s := range req.Services {
		svc, err := service(s.Protocol, s.ListenPort, s.DestinationPort, s.Proxyprotocol, s.HealthCheck)
		if err != nil {
			return 0, nil, err
		}
		if err := f.addService(lb, svc); err != nil {
			return 0, nil, err
		}
	}
	for _, t := range req.Targets {
		target := schema.LoadBalancerTarget{Type: t.Type, UsePrivateIP: t.UsePrivateIP != nil && *t.UsePrivateIP}
		if t.Server != nil {
			target.Server = &schema.LoadBalancerTargetServer{ID: t.Server.ID}
		}
		if t.LabelSelector != nil {
			target.LabelSelector = &schema.LoadBalancerTargetLabelSelector{Selector: t.LabelSelector.Selector}
		}
		if t.IP != nil {
			target.IP = &schema.LoadBalancerTargetIP{IP: t.IP.IP}
		}
		if err := f.addTarget(lb, target); err != nil {
			return 0, nil, err
		}
	}
	if req.PublicInterface == nil || *req.PublicInterface {
		ip, err := f.allocateIPv4()
		if err != nil {
			return 0, nil, errCode(http.StatusPreconditionFailed, "resource_unavailable", err.Error())
		}
		lb.PublicNet = schema.LoadBalancerPublicNet{Enabled: true,
			IPv4: schema.LoadBalancerPublicNetIPv4{IP: ip, DNSPtr: "static." + ip + ".clients.your-server.de"},
			IPv6: schema.LoadBalancerPublicNetIPv6{IP: fmt.Sprintf("2001:db8:%x::1", lb.ID&0xffff)}}
	}
	f.lbs[lb.ID] = lb
	a := f.newAction("create_load_balancer", rq.now, ref("load_balancer", lb.ID))
	return http.StatusCreated, map[string]any{"load_balancer": f.renderLB(lb), "action": a.render(rq.now)}, nil
}
