package hcloudfake

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/hetznercloud/hcloud-go/v2/hcloud/schema"
)

// service builds a service from a create or add_service request. The API
// description marks proxyprotocol and health_check required on a service,
// and protocol, port, interval, timeout and retries required on a health
// check (schemas LoadBalancerService and LoadBalancerServiceHealthCheck);
// field prefixes the error's field name ("services[0]." on create). http
// listens on 80 and https on 443, both forward to 80 by default.
func service(field, protocol string, listen, dest *int, proxy *bool, hc *schema.LoadBalancerCreateRequestServiceHealthCheck) (schema.LoadBalancerService, error) {
	s := schema.LoadBalancerService{Protocol: protocol}
	if proxy == nil {
		return s, errInvalid(field+"proxyprotocol", "proxyprotocol is required: true or false")
	}
	if hc == nil {
		return s, errInvalid(field+"health_check", "health_check is required: protocol, port, interval, timeout and retries")
	}
	for i, v := range []*int{hc.Port, hc.Interval, hc.Timeout, hc.Retries} {
		if name := []string{"port", "interval", "timeout", "retries"}[i]; v == nil {
			return s, errInvalid(field+"health_check."+name, "health_check."+name+" is required")
		}
	}
	if hc.Protocol != "tcp" && hc.Protocol != "http" && hc.Protocol != "https" {
		return s, errInvalid(field+"health_check.protocol", fmt.Sprintf("health check protocol %q is not one of tcp, http, https", hc.Protocol))
	}
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
	// The description has objects, never null, for service.http and
	// health_check.http: a TCP service shows the defaults.
	s.HTTP = &schema.LoadBalancerServiceHTTP{CookieName: "HCLBSTICKY", CookieLifetime: 300, Certificates: []int64{}, TimeoutIdle: 60}
	s.HealthCheck = &schema.LoadBalancerServiceHealthCheck{Protocol: hc.Protocol, Port: *hc.Port, Interval: *hc.Interval,
		Timeout: *hc.Timeout, Retries: *hc.Retries,
		HTTP: &schema.LoadBalancerServiceHealthCheckHTTP{Path: "/", StatusCodes: []string{"2??", "3??"}}}
	if h := hc.HTTP; h != nil {
		if h.Domain != nil {
			s.HealthCheck.HTTP.Domain = *h.Domain
		}
		if h.Path != nil {
			s.HealthCheck.HTTP.Path = *h.Path
		}
		if h.Response != nil {
			s.HealthCheck.HTTP.Response = *h.Response
		}
		if h.StatusCodes != nil {
			s.HealthCheck.HTTP.StatusCodes = *h.StatusCodes
		}
		if h.TLS != nil {
			s.HealthCheck.HTTP.TLS = *h.TLS
		}
	}
	return s, nil
}

func (f *Fake) addService(lb *schema.LoadBalancer, s schema.LoadBalancerService) error {
	if slices.ContainsFunc(lb.Services, func(x schema.LoadBalancerService) bool { return x.ListenPort == s.ListenPort }) {
		return errCode(http.StatusPreconditionFailed, "source_port_already_used", fmt.Sprintf("listen port %d is already used by another service", s.ListenPort))
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
		return errCode(http.StatusUnprocessableEntity, "load_balancer_already_attached", fmt.Sprintf("load balancer %d is already attached to network %d", lb.ID, networkID))
	}
	ip, err := f.allocatePrivateIP(networkID, lb.Location.NetworkZone, want)
	if err != nil {
		return err
	}
	lb.PrivateNet = append(lb.PrivateNet, schema.LoadBalancerPrivateNet{Network: networkID, IP: ip})
	return nil
}

func (f *Fake) createLB(rq *request) (int, any, error) {
	req, err := decodeCreate(rq, f.lbKind(), func(r *schema.LoadBalancerCreateRequest) string { return r.Name })
	if err != nil {
		return 0, nil, err
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
	if err := checkNewLabels(req.Labels); err != nil {
		return 0, nil, err
	}
	algo := "round_robin"
	if req.Algorithm != nil && req.Algorithm.Type != "" {
		if req.Algorithm.Type != "round_robin" && req.Algorithm.Type != "least_connections" {
			return 0, nil, errInvalid("algorithm", fmt.Sprintf("algorithm %q is not round_robin or least_connections", req.Algorithm.Type))
		}
		algo = req.Algorithm.Type
	}
	lb := &schema.LoadBalancer{ID: f.nextID(), Name: req.Name, Location: loc, LoadBalancerType: lt,
		Labels: labelsOrEmpty(req.Labels), Created: rq.created(), Algorithm: schema.LoadBalancerAlgorithm{Type: algo},
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
	for i, s := range req.Services {
		svc, err := service(fmt.Sprintf("services[%d].", i), s.Protocol, s.ListenPort, s.DestinationPort, s.Proxyprotocol, s.HealthCheck)
		if err != nil {
			return 0, nil, err
		}
		if err := f.addService(lb, svc); err != nil {
			return 0, nil, err
		}
	}
	// The targets of a create request have the JSON of add_target requests.
	var targets struct {
		Targets []schema.LoadBalancerActionAddTargetRequest `json:"targets"`
	}
	if err := rq.decode(&targets); err != nil {
		return 0, nil, err
	}
	for _, t := range targets.Targets {
		if err := f.addTarget(lb, toTarget(t)); err != nil {
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

// lbKind is the collection behind /load_balancers.
func (f *Fake) lbKind() *collection[*schema.LoadBalancer, lbJSON] {
	c := &collection[*schema.LoadBalancer, lbJSON]{plural: "load_balancers", single: "load_balancer",
		noun: "load balancer", items: f.lbs, render: f.renderLB, create: f.createLB, action: f.lbAction,
		fields: func(x *schema.LoadBalancer) (int64, *string, *map[string]string) { return x.ID, &x.Name, &x.Labels },
		// Since 2026-10-05 a delete answers 201 with an action, no longer
		// 204 (docs.hetzner.cloud/changelog#2026-10-05-delete-load-balancer-returns-action,
		// hcloud-go v2.52 LoadBalancerClient.DeleteWithResult).
		remove: func(rq *request, id int64, _ *schema.LoadBalancer) (*action, error) {
			return f.newAction("delete_load_balancer", rq.now, ref("load_balancer", id)), nil
		},
		removeStatus: http.StatusCreated,
	}
	c.update = patchBy(c, func(r *schema.LoadBalancerUpdateRequest) (*string, *map[string]string) { return r.Name, r.Labels })
	return c
}
