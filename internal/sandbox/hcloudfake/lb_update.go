package hcloudfake

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/hetznercloud/hcloud-go/v2/hcloud/schema"
)

// lbChange serves the load balancer actions that change it in place:
// update_service (the service on listen_port must exist; only the fields
// sent change) and change_type (the new type must exist and hold the
// services and targets the load balancer has), after Hetzner's API
// description of POST /load_balancers/{id}/actions/update_service and
// /change_type.
func (f *Fake) lbChange(rq *request, lb *schema.LoadBalancer, command string) (int, any, error) {
	switch command {
	case "update_service":
		var req schema.LoadBalancerActionUpdateServiceRequest
		if err := rq.decode(&req); err != nil {
			return 0, nil, err
		}
		// listen_port is the one field update_load_balancer_service
		// requires in the API description; everything else is optional.
		var port struct {
			ListenPort *int `json:"listen_port"`
		}
		if err := rq.decode(&port); err != nil {
			return 0, nil, err
		}
		if port.ListenPort == nil {
			return 0, nil, errInvalid("listen_port", "listen_port is required: the port of the service to update")
		}
		i := slices.IndexFunc(lb.Services, func(s schema.LoadBalancerService) bool { return s.ListenPort == req.ListenPort })
		if i < 0 {
			return 0, nil, errCode(http.StatusNotFound, "not_found", fmt.Sprintf("no service listens on port %d", req.ListenPort))
		}
		if err := updateService(&lb.Services[i], req); err != nil {
			return 0, nil, err
		}
	case "change_type":
		var req schema.LoadBalancerActionChangeTypeRequest
		if err := rq.decode(&req); err != nil {
			return 0, nil, err
		}
		lt, ok := f.cat.lbType(req.LoadBalancerType)
		if !ok {
			return 0, nil, errInvalid("load_balancer_type", fmt.Sprintf("load balancer type %s not found", idOrNameString(req.LoadBalancerType)))
		}
		if len(lb.Services) > lt.MaxServices || len(lb.Targets) > lt.MaxTargets {
			return 0, nil, errCode(http.StatusUnprocessableEntity, "invalid_input",
				fmt.Sprintf("%s allows %d services and %d targets; the load balancer has %d and %d", lt.Name, lt.MaxServices, lt.MaxTargets, len(lb.Services), len(lb.Targets)))
		}
		lb.LoadBalancerType = lt
	default:
		return 0, nil, errNoRoute(rq)
	}
	return http.StatusCreated, f.actionBody(f.newAction(command, rq.now, ref("load_balancer", lb.ID)), rq.now), nil
}

func updateService(s *schema.LoadBalancerService, req schema.LoadBalancerActionUpdateServiceRequest) error {
	if req.Protocol != nil {
		switch *req.Protocol {
		case "tcp", "http", "https":
			s.Protocol = *req.Protocol
		default:
			return errInvalid("protocol", fmt.Sprintf("protocol %q is not one of tcp, http, https", *req.Protocol))
		}
	}
	if req.DestinationPort != nil {
		s.DestinationPort = *req.DestinationPort
	}
	if req.Proxyprotocol != nil {
		s.Proxyprotocol = *req.Proxyprotocol
	}
	hc := req.HealthCheck
	if hc == nil {
		return nil
	}
	if s.HealthCheck == nil {
		s.HealthCheck = &schema.LoadBalancerServiceHealthCheck{}
	}
	if hc.Protocol != nil {
		s.HealthCheck.Protocol = *hc.Protocol
	}
	for _, f := range []struct {
		from *int
		to   *int
	}{{hc.Port, &s.HealthCheck.Port}, {hc.Interval, &s.HealthCheck.Interval}, {hc.Timeout, &s.HealthCheck.Timeout}, {hc.Retries, &s.HealthCheck.Retries}} {
		if f.from != nil {
			*f.to = *f.from
		}
	}
	return nil
}
