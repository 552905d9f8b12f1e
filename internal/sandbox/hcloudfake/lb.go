package hcloudfake

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/hetznercloud/hcloud-go/v2/hcloud/schema"
)

// Defaults the real API fills in a load balancer service. Hetzner's API
// description (components.schemas.load_balancer_service, the body of
// POST /load_balancers/{id}/actions/add_service and the items of
// create_load_balancer_request.services) lists proxyprotocol, health_check
// and the check's interval, timeout and retries as required, but the real
// API accepts requests without them: Hetzner's own CLI
// (hetznercloud/cli internal/cmd/loadbalancer/add_service.go, its e2e test
// test/e2e/combined_test.go "add-service") sends no health_check unless a
// --health-check-* flag is given, and sends interval, timeout and retries
// only when changed, documenting 15s, 10s and 3 as what applies otherwise.
const (
	defaultCheckInterval = 15
	defaultCheckTimeout  = 10
	defaultCheckRetries  = 3
)

// service builds a service from a create or add_service request. protocol
// is required, and a tcp service needs listen_port and destination_port;
// http listens on 80 and https on 443, both forward to 80 by default.
// Without proxyprotocol it is off; without health_check the check probes
// the destination port (tcp for a tcp service, http otherwise). A
// health_check that is sent needs protocol and port. field prefixes the
// error's field name ("services[0]." on create).
func service(field, protocol string, listen, dest *int, proxy *bool, hc *schema.LoadBalancerCreateRequestServiceHealthCheck) (schema.LoadBalancerService, error) {
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
	// The description has objects, never null, for service.http and
	// health_check.http: a TCP service shows the defaults.
	s.HTTP = &schema.LoadBalancerServiceHTTP{CookieName: "HCLBSTICKY", CookieLifetime: 300, Certificates: []int64{}, TimeoutIdle: 60}
	check, err := healthCheck(field, s, hc)
	s.HealthCheck = check
	return s, err
}

// healthCheck builds the health check of service s from the request's
// health_check, or the default check when the request has none.
func healthCheck(field string, s schema.LoadBalancerService, hc *schema.LoadBalancerCreateRequestServiceHealthCheck) (*schema.LoadBalancerServiceHealthCheck, error) {
	// status_codes defaults to ["2??", "3??"] in the description
	// (load_balancer_service.health_check.http.status_codes.default).
	out := &schema.LoadBalancerServiceHealthCheck{Protocol: "http", Port: s.DestinationPort, Interval: defaultCheckInterval,
		Timeout: defaultCheckTimeout, Retries: defaultCheckRetries,
		HTTP: &schema.LoadBalancerServiceHealthCheckHTTP{Path: "/", StatusCodes: []string{"2??", "3??"}}}
	if hc == nil {
		if s.Protocol == "tcp" {
			out.Protocol = "tcp"
		}
		return out, nil
	}
	switch {
	case hc.Protocol == "":
		return nil, errInvalid(field+"health_check.protocol", "health_check.protocol is required: tcp, http or https")
	case hc.Protocol != "tcp" && hc.Protocol != "http" && hc.Protocol != "https":
		return nil, errInvalid(field+"health_check.protocol", fmt.Sprintf("health check protocol %q is not one of tcp, http, https", hc.Protocol))
	case hc.Port == nil:
		return nil, errInvalid(field+"health_check.port", "health_check.port is required")
	}
	out.Protocol, out.Port = hc.Protocol, *hc.Port
	for _, v := range []struct{ from, to *int }{{hc.Interval, &out.Interval}, {hc.Timeout, &out.Timeout}, {hc.Retries, &out.Retries}} {
		if v.from != nil {
			*v.to = *v.from
		}
	}
	if h := hc.HTTP; h != nil {
		setIf(&out.HTTP.Domain, h.Domain)
		setIf(&out.HTTP.Path, h.Path)
		setIf(&out.HTTP.Response, h.Response)
		setIf(&out.HTTP.StatusCodes, h.StatusCodes)
		setIf(&out.HTTP.TLS, h.TLS)
	}
	return out, nil
}

// setIf sets *to to *from when from is set.
func setIf[T any](to *T, from *T) {
	if from != nil {
		*to = *from
	}
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
