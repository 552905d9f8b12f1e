package hcloudfake

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/hetznercloud/hcloud-go/v2/hcloud/schema"
)

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
	for _, s := range req.Services {
		svc, err := service(s.Protocol, s.ListenPort, s.DestinationPort, s.Proxyprotocol, s.HealthCheck)
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
func (f *Fake) lbKind() *collection[*schema.LoadBalancer, schema.LoadBalancer] {
	c := &collection[*schema.LoadBalancer, schema.LoadBalancer]{plural: "load_balancers", single: "load_balancer",
		noun: "load balancer", items: f.lbs, render: f.renderLB, create: f.createLB, action: f.lbAction,
		fields: func(x *schema.LoadBalancer) (int64, *string, *map[string]string) { return x.ID, &x.Name, &x.Labels },
		remove: func(rq *request, id int64, _ *schema.LoadBalancer) (*action, error) {
			return f.newAction("delete_load_balancer", rq.now, ref("load_balancer", id)), nil
		},
	}
	c.update = patchBy(c, func(r *schema.LoadBalancerUpdateRequest) (*string, *map[string]string) { return r.Name, r.Labels })
	return c
}
