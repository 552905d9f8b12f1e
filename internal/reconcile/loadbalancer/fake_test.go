package loadbalancer

import (
	"context"
	"fmt"
	"slices"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/reconcile/reconciletest"
)

// fakeClient is an in-memory Client: it keeps load balancers by ID,
// changes them as Hetzner would for the calls the service makes, and
// records each call. It is the narrow-interface fake; the HTTP sandbox
// (internal/sandbox/hcloudfake) covers the wire.
// store keeps the fake's load balancers by ID.
type store = reconciletest.Store[*hcloud.LoadBalancer, hcloud.LoadBalancerListOpts]

type fakeClient struct {
	store
	nextID int64
	calls  []string
	// selectors are the label selectors listed with.
	selectors []string
	// fail makes the named call fail once with err.
	fail map[string]error
}

func newFake(lbs ...*hcloud.LoadBalancer) *fakeClient {
	f := &fakeClient{store: store{}, nextID: 100, fail: map[string]error{}}
	for _, lb := range lbs {
		f.store[lb.ID] = lb
	}
	return f
}

func (f *fakeClient) call(name string) (*hcloud.Action, error) {
	if err := reconciletest.Record(&f.calls, f.fail, name); err != nil {
		return nil, err
	}
	f.nextID++
	return &hcloud.Action{ID: f.nextID, Status: hcloud.ActionStatusRunning}, nil
}

func (f *fakeClient) AllWithOpts(_ context.Context, opts hcloud.LoadBalancerListOpts) ([]*hcloud.LoadBalancer, error) {
	f.selectors = append(f.selectors, opts.LabelSelector)
	return reconciletest.ByID(f.store), nil
}

func (f *fakeClient) Create(_ context.Context, opts hcloud.LoadBalancerCreateOpts) (hcloud.LoadBalancerCreateResult, *hcloud.Response, error) {
	a, err := f.call("create")
	if err != nil {
		return hcloud.LoadBalancerCreateResult{}, nil, err
	}
	lb := &hcloud.LoadBalancer{ID: f.nextID + 1000, Name: opts.Name, Labels: opts.Labels, LoadBalancerType: opts.LoadBalancerType, Location: opts.Location}
	f.store[lb.ID] = lb
	return hcloud.LoadBalancerCreateResult{LoadBalancer: lb, Action: a}, nil, nil
}

func (f *fakeClient) Update(_ context.Context, lb *hcloud.LoadBalancer, opts hcloud.LoadBalancerUpdateOpts) (*hcloud.LoadBalancer, *hcloud.Response, error) {
	if _, err := f.call("update labels"); err != nil {
		return nil, nil, err
	}
	lb.Labels = opts.Labels
	return lb, nil, nil
}

func (f *fakeClient) ChangeType(_ context.Context, lb *hcloud.LoadBalancer, opts hcloud.LoadBalancerChangeTypeOpts) (*hcloud.Action, *hcloud.Response, error) {
	a, err := f.call("change type " + opts.LoadBalancerType.Name)
	if err == nil {
		lb.LoadBalancerType = &hcloud.LoadBalancerType{Name: opts.LoadBalancerType.Name}
	}
	return a, nil, err
}

func (f *fakeClient) AttachToNetwork(_ context.Context, lb *hcloud.LoadBalancer, opts hcloud.LoadBalancerAttachToNetworkOpts) (*hcloud.Action, *hcloud.Response, error) {
	a, err := f.call(fmt.Sprintf("attach network %d", opts.Network.ID))
	if err == nil {
		lb.PrivateNet = append(lb.PrivateNet, hcloud.LoadBalancerPrivateNet{Network: opts.Network})
	}
	return a, nil, err
}

func (f *fakeClient) AddService(_ context.Context, lb *hcloud.LoadBalancer, opts hcloud.LoadBalancerAddServiceOpts) (*hcloud.Action, *hcloud.Response, error) {
	port := *opts.ListenPort
	if _, ok := ServiceOn(lb, port); ok {
		return nil, nil, hcloud.Error{Code: hcloud.ErrorCodeUniquenessError, Message: "listen port taken"}
	}
	a, err := f.call(fmt.Sprintf("add service %d", port))
	if err == nil {
		hc := opts.HealthCheck
		lb.Services = append(lb.Services, hcloud.LoadBalancerService{Protocol: opts.Protocol, ListenPort: port, DestinationPort: *opts.DestinationPort,
			Proxyprotocol: *opts.Proxyprotocol, HealthCheck: hcloud.LoadBalancerServiceHealthCheck{Protocol: hc.Protocol, Port: *hc.Port,
				Interval: *hc.Interval, Timeout: *hc.Timeout, Retries: *hc.Retries}})
	}
	return a, nil, err
}

func (f *fakeClient) UpdateService(_ context.Context, lb *hcloud.LoadBalancer, port int, opts hcloud.LoadBalancerUpdateServiceOpts) (*hcloud.Action, *hcloud.Response, error) {
	i := slices.IndexFunc(lb.Services, func(s hcloud.LoadBalancerService) bool { return s.ListenPort == port })
	if i < 0 {
		return nil, nil, hcloud.Error{Code: hcloud.ErrorCodeNotFound, Message: "no service on the port"}
	}
	a, err := f.call(fmt.Sprintf("update service %d", port))
	if err == nil {
		hc := opts.HealthCheck
		lb.Services[i] = hcloud.LoadBalancerService{Protocol: opts.Protocol, ListenPort: port, DestinationPort: *opts.DestinationPort,
			Proxyprotocol: *opts.Proxyprotocol, HealthCheck: hcloud.LoadBalancerServiceHealthCheck{Protocol: hc.Protocol, Port: *hc.Port,
				Interval: *hc.Interval, Timeout: *hc.Timeout, Retries: *hc.Retries}}
	}
	return a, nil, err
}

func (f *fakeClient) DeleteService(_ context.Context, lb *hcloud.LoadBalancer, port int) (*hcloud.Action, *hcloud.Response, error) {
	a, err := f.call(fmt.Sprintf("delete service %d", port))
	if err == nil {
		lb.Services = slices.DeleteFunc(lb.Services, func(s hcloud.LoadBalancerService) bool { return s.ListenPort == port })
	}
	return a, nil, err
}

func (f *fakeClient) AddLabelSelectorTarget(_ context.Context, lb *hcloud.LoadBalancer, opts hcloud.LoadBalancerAddLabelSelectorTargetOpts) (*hcloud.Action, *hcloud.Response, error) {
	if slices.ContainsFunc(lb.Targets, func(t hcloud.LoadBalancerTarget) bool {
		return t.LabelSelector != nil && t.LabelSelector.Selector == opts.Selector
	}) {
		return nil, nil, hcloud.Error{Code: hcloud.ErrorCodeTargetAlreadyDefined, Message: "target already defined"}
	}
	a, err := f.call("add target " + opts.Selector)
	if err == nil {
		lb.Targets = append(lb.Targets, hcloud.LoadBalancerTarget{Type: hcloud.LoadBalancerTargetTypeLabelSelector,
			LabelSelector: &hcloud.LoadBalancerTargetLabelSelector{Selector: opts.Selector}, UsePrivateIP: *opts.UsePrivateIP})
	}
	return a, nil, err
}

func (f *fakeClient) RemoveLabelSelectorTarget(_ context.Context, lb *hcloud.LoadBalancer, selector string) (*hcloud.Action, *hcloud.Response, error) {
	a, err := f.call("remove target " + selector)
	if err == nil {
		lb.Targets = slices.DeleteFunc(lb.Targets, func(t hcloud.LoadBalancerTarget) bool {
			return t.LabelSelector != nil && t.LabelSelector.Selector == selector
		})
	}
	return a, nil, err
}
