package hcloudfake

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/hetznercloud/hcloud-go/v2/hcloud/schema"
)

// removeFirst deletes the first element of *s that match accepts; with
// none it answers 404 not_found with message.
func removeFirst[T any](s *[]T, match func(T) bool, message string) error {
	i := slices.IndexFunc(*s, match)
	if i < 0 {
		return errCode(http.StatusNotFound, "not_found", message)
	}
	*s = slices.Delete(*s, i, i+1)
	return nil
}

func (f *Fake) lbAction(rq *request, lb *schema.LoadBalancer, command string) (int, any, error) {
	refs := []schema.ActionResourceReference{ref("load_balancer", lb.ID)}
	switch command {
	case "add_target":
		var req schema.LoadBalancerActionAddTargetRequest
		if err := rq.decode(&req); err != nil {
			return 0, nil, err
		}
		if req.Server != nil {
			refs = append(refs, ref("server", req.Server.ID))
		}
		if err := f.addTarget(lb, toTarget(req)); err != nil {
			return 0, nil, err
		}
	case "remove_target":
		// remove_target has the JSON of add_target without use_private_ip.
		var req schema.LoadBalancerActionAddTargetRequest
		if err := rq.decode(&req); err != nil {
			return 0, nil, err
		}
		t := toTarget(req)
		t.UsePrivateIP = false
		if err := removeFirst(&lb.Targets, func(x schema.LoadBalancerTarget) bool { return sameTarget(x, t) },
			"target not found on the load balancer"); err != nil {
			return 0, nil, err
		}
	case "add_service":
		var req schema.LoadBalancerActionAddServiceRequest
		if err := rq.decode(&req); err != nil {
			return 0, nil, err
		}
		var hc *schema.LoadBalancerCreateRequestServiceHealthCheck
		if req.HealthCheck != nil {
			hc = &schema.LoadBalancerCreateRequestServiceHealthCheck{Protocol: req.HealthCheck.Protocol, Port: req.HealthCheck.Port,
				Interval: req.HealthCheck.Interval, Timeout: req.HealthCheck.Timeout, Retries: req.HealthCheck.Retries}
			if h := req.HealthCheck.HTTP; h != nil {
				hc.HTTP = &schema.LoadBalancerCreateRequestServiceHealthCheckHTTP{Domain: h.Domain, Path: h.Path,
					Response: h.Response, StatusCodes: h.StatusCodes, TLS: h.TLS}
			}
		}
		svc, err := service("", req.Protocol, req.ListenPort, req.DestinationPort, req.Proxyprotocol, hc)
		if err != nil {
			return 0, nil, err
		}
		if err := f.addService(lb, svc); err != nil {
			return 0, nil, err
		}
	case "delete_service":
		var req schema.LoadBalancerDeleteServiceRequest
		if err := rq.decode(&req); err != nil {
			return 0, nil, err
		}
		if err := removeFirst(&lb.Services, func(s schema.LoadBalancerService) bool { return s.ListenPort == req.ListenPort },
			fmt.Sprintf("no service listens on port %d", req.ListenPort)); err != nil {
			return 0, nil, err
		}
	case "attach_to_network":
		var req schema.LoadBalancerActionAttachToNetworkRequest
		if err := rq.decode(&req); err != nil {
			return 0, nil, err
		}
		if _, ok := f.networks[req.Network]; !ok {
			return 0, nil, errInvalid("network", fmt.Sprintf("network %d not found", req.Network))
		}
		want := ""
		if req.IP != nil {
			want = *req.IP
		}
		if err := f.attachLB(lb, req.Network, want); err != nil {
			return 0, nil, err
		}
		refs = append(refs, ref("network", req.Network))
	case "detach_from_network":
		var req schema.LoadBalancerActionDetachFromNetworkRequest
		if err := rq.decode(&req); err != nil {
			return 0, nil, err
		}
		if err := removeFirst(&lb.PrivateNet, func(pn schema.LoadBalancerPrivateNet) bool { return pn.Network == req.Network },
			fmt.Sprintf("load balancer %d is not attached to network %d", lb.ID, req.Network)); err != nil {
			return 0, nil, err
		}
		refs = append(refs, ref("network", req.Network))
	case "change_algorithm":
		var req schema.LoadBalancerActionChangeAlgorithmRequest
		if err := rq.decode(&req); err != nil {
			return 0, nil, err
		}
		if req.Type != "round_robin" && req.Type != "least_connections" {
			return 0, nil, errInvalid("type", fmt.Sprintf("algorithm %q is not round_robin or least_connections", req.Type))
		}
		lb.Algorithm.Type = req.Type
	case "update_service", "change_type":
		return f.lbChange(rq, lb, command)
	default:
		return 0, nil, errNoRoute(rq)
	}
	return http.StatusCreated, f.actionBody(f.newAction(command, rq.now, refs...), rq.now), nil
}
