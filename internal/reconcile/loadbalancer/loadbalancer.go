// Package loadbalancer reconciles a Hetzner load balancer with what the
// spec wants: find it, create it, compare it (Plan, a typed Diff) and
// make the in-place changes (Reconcile). It works over Client, the few
// hcloud-go calls it makes, after cluster-api-provider-hetzner's
// pkg/services/hcloud/loadbalancer/loadbalancer.go (reconcileServices
// and the other reconcile methods of its service).
package loadbalancer

import (
	"context"
	"fmt"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/reconcile"
)

// Client is the part of hcloud.ILoadBalancerClient the service uses.
type Client interface {
	reconcile.Lookup[*hcloud.LoadBalancer, hcloud.LoadBalancerListOpts]
	Create(ctx context.Context, opts hcloud.LoadBalancerCreateOpts) (hcloud.LoadBalancerCreateResult, *hcloud.Response, error)
	Update(ctx context.Context, lb *hcloud.LoadBalancer, opts hcloud.LoadBalancerUpdateOpts) (*hcloud.LoadBalancer, *hcloud.Response, error)
	ChangeType(ctx context.Context, lb *hcloud.LoadBalancer, opts hcloud.LoadBalancerChangeTypeOpts) (*hcloud.Action, *hcloud.Response, error)
	AttachToNetwork(ctx context.Context, lb *hcloud.LoadBalancer, opts hcloud.LoadBalancerAttachToNetworkOpts) (*hcloud.Action, *hcloud.Response, error)
	AddService(ctx context.Context, lb *hcloud.LoadBalancer, opts hcloud.LoadBalancerAddServiceOpts) (*hcloud.Action, *hcloud.Response, error)
	UpdateService(ctx context.Context, lb *hcloud.LoadBalancer, listenPort int, opts hcloud.LoadBalancerUpdateServiceOpts) (*hcloud.Action, *hcloud.Response, error)
	DeleteService(ctx context.Context, lb *hcloud.LoadBalancer, listenPort int) (*hcloud.Action, *hcloud.Response, error)
	AddLabelSelectorTarget(ctx context.Context, lb *hcloud.LoadBalancer, opts hcloud.LoadBalancerAddLabelSelectorTargetOpts) (*hcloud.Action, *hcloud.Response, error)
	RemoveLabelSelectorTarget(ctx context.Context, lb *hcloud.LoadBalancer, selector string) (*hcloud.Action, *hcloud.Response, error)
}

// Want is the load balancer the spec needs.
type Want struct {
	Name     string
	Labels   map[string]string
	Type     string          // load balancer type, such as lb11
	Location string          // "" leaves the location to Hetzner
	Target   string          // label selector of the targets, over private IPs
	Ports    []int           // TCP passthrough services, in order
	Network  *hcloud.Network // the private network; nil when not known yet
	// ServicesBy is the Service (NAMESPACE/NAME) whose cloud controller
	// owns the services and targets: "" when ohmytalos owns them. With
	// it set, Create sends neither, and Plan compares only the fields
	// ohmytalos keeps owning: type, location, network and labels. The
	// hcloud cloud controller adopts the load balancer by its name
	// (hcloud-cloud-controller-manager hcloud/load_balancers.go,
	// EnsureLoadBalancer: by the hcloud-ccm/service-uid label, then by the
	// load-balancer.hetzner.cloud/name annotation) and then reconciles
	// every service and server target to the Service's ports and nodes
	// (internal/hcops/load_balancer.go, ReconcileHCLBServices,
	// ReconcileHCLBTargets); sending ours would make the two fight.
	ServicesBy string
}

// Managed reports whether ohmytalos owns the services and targets.
func (w Want) Managed() bool { return w.ServicesBy == "" }

// Service reconciles load balancers; its Finder gives Find, Get and List.
type Service reconcile.Base[*hcloud.LoadBalancer, hcloud.LoadBalancerListOpts, Client]

// New returns a service over client. actions and retry are only used by
// Reconcile; retry nil calls once.
func New(client Client, actions reconcile.ActionWaiter, retry reconcile.Retry) *Service {
	return (*Service)(reconcile.NewBase("load-balancer", client, func(o hcloud.ListOpts) hcloud.LoadBalancerListOpts { return hcloud.LoadBalancerListOpts{ListOpts: o} }, meta, actions, retry))
}

func meta(lb *hcloud.LoadBalancer) reconcile.Meta {
	return reconcile.Meta{ID: lb.ID, Name: lb.Name, Labels: lb.Labels}
}

// Created is a load balancer just created and the action that makes it
// ready, to wait for off the critical path.
type Created struct {
	LoadBalancer *hcloud.LoadBalancer
	Action       *hcloud.Action
}

// Create creates the load balancer w describes, in its network, with a
// label-selector target over private IPs and its services.
func (s *Service) Create(ctx context.Context, w Want) (Created, error) {
	r, _, err := s.Client.Create(ctx, CreateOpts(w))
	if err != nil {
		return Created{}, fmt.Errorf("create load balancer %s: %w", w.Name, err)
	}
	return Created{LoadBalancer: r.LoadBalancer, Action: r.Action}, nil
}

// CreateOpts is the create request for w: every service carries
// proxyprotocol and a full health check. A load balancer whose services
// and targets the cloud controller owns is created without either.
func CreateOpts(w Want) hcloud.LoadBalancerCreateOpts {
	opts := hcloud.LoadBalancerCreateOpts{
		Name: w.Name, Labels: w.Labels,
		LoadBalancerType: &hcloud.LoadBalancerType{Name: w.Type},
		Location:         &hcloud.Location{Name: w.Location},
		Network:          w.Network,
	}
	if !w.Managed() {
		return opts
	}
	opts.Targets = []hcloud.LoadBalancerCreateOptsTarget{{
		Type:          hcloud.LoadBalancerTargetTypeLabelSelector,
		LabelSelector: hcloud.LoadBalancerCreateOptsTargetLabelSelector{Selector: w.Target},
		UsePrivateIP:  hcloud.Ptr(true),
	}}
	for _, p := range w.Ports {
		sv := WantService(p)
		hc := sv.HealthCheck
		opts.Services = append(opts.Services, hcloud.LoadBalancerCreateOptsService{
			Protocol: sv.Protocol, ListenPort: hcloud.Ptr(sv.ListenPort), DestinationPort: hcloud.Ptr(sv.DestinationPort),
			Proxyprotocol: hcloud.Ptr(sv.Proxyprotocol),
			HealthCheck: &hcloud.LoadBalancerCreateOptsServiceHealthCheck{Protocol: hc.Protocol, Port: hcloud.Ptr(hc.Port),
				Interval: hcloud.Ptr(hc.Interval), Timeout: hcloud.Ptr(hc.Timeout), Retries: hcloud.Ptr(hc.Retries)},
		})
	}
	return opts
}

// The health check of every service: TCP on the destination port, every
// 15 s with a 10 s timeout and 3 retries (the values Hetzner fills in
// when none are given, as the sandbox models them). Hetzner's API
// description marks health_check and proxyprotocol as required for each
// service, and protocol, port, interval, timeout and retries as required
// in a health check (the OpenAPI-generated hcloud crate on docs.rs,
// src/models/load_balancer_service_health_check.rs), so all are sent.
const (
	HealthInterval = 15 * time.Second
	HealthTimeout  = 10 * time.Second
	HealthRetries  = 3
)

// WantService is the TCP passthrough service wanted on port.
func WantService(port int) hcloud.LoadBalancerService {
	return hcloud.LoadBalancerService{Protocol: hcloud.LoadBalancerServiceProtocolTCP, ListenPort: port, DestinationPort: port, Proxyprotocol: false,
		HealthCheck: hcloud.LoadBalancerServiceHealthCheck{Protocol: hcloud.LoadBalancerServiceProtocolTCP, Port: port,
			Interval: HealthInterval, Timeout: HealthTimeout, Retries: HealthRetries}}
}
