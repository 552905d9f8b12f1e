package loadbalancer

import (
	"context"
	"fmt"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/reconcile"
)

// Reconcile makes d's in-place changes to lb, in order: type, network
// (targets use private IPs), services, targets, labels; each action is
// waited for. A Location in d is left for the caller to report.
func (s *Service) Reconcile(ctx context.Context, lb *hcloud.LoadBalancer, w Want, d Diff) error {
	if d.Type != "" {
		if err := s.do(ctx, lb, "change the type", func() (*hcloud.Action, error) {
			a, _, err := s.Client.ChangeType(ctx, lb, hcloud.LoadBalancerChangeTypeOpts{LoadBalancerType: &hcloud.LoadBalancerType{Name: d.Type}})
			return a, err
		}); err != nil {
			return err
		}
	}
	if d.Network != nil {
		if err := s.do(ctx, lb, "attach the network", func() (*hcloud.Action, error) {
			a, _, err := s.Client.AttachToNetwork(ctx, lb, hcloud.LoadBalancerAttachToNetworkOpts{Network: d.Network})
			return a, err
		}); err != nil {
			return err
		}
	}
	if err := s.reconcileServices(ctx, lb, d.Services.Ops(w.Ports)); err != nil {
		return err
	}
	if err := s.reconcileTargets(ctx, lb, d.Targets); err != nil {
		return err
	}
	if !d.Labels.Empty() {
		if _, _, err := s.Client.Update(ctx, lb, hcloud.LoadBalancerUpdateOpts{Labels: reconcile.MergeLabels(lb.Labels, w.Labels)}); err != nil {
			return fmt.Errorf("set the labels of load balancer %s: %w", lb.Name, err)
		}
	}
	return nil
}

// do makes one call (again while the load balancer is locked) and waits
// for its action.
func (s *Service) do(ctx context.Context, lb *hcloud.LoadBalancer, what string, call func() (*hcloud.Action, error)) error {
	if err := reconcile.Act(ctx, s.Retry, s.Actions, call); err != nil {
		return fmt.Errorf("%s of load balancer %s: %w", what, lb.Name, err)
	}
	return nil
}

func (s *Service) reconcileServices(ctx context.Context, lb *hcloud.LoadBalancer, ops []ServiceOp) error {
	for _, op := range ops {
		if err := s.do(ctx, lb, fmt.Sprintf("set the service on port %d", op.Port), func() (*hcloud.Action, error) {
			return s.serviceCall(ctx, lb, op)
		}); err != nil {
			return err
		}
	}
	return nil
}

// serviceCall adds, updates or deletes the service on op.Port.
func (s *Service) serviceCall(ctx context.Context, lb *hcloud.LoadBalancer, op ServiceOp) (*hcloud.Action, error) {
	w := WantService(op.Port)
	hc := w.HealthCheck
	var a *hcloud.Action
	var err error
	switch op.Kind {
	case OpDelete:
		a, _, err = s.Client.DeleteService(ctx, lb, op.Port)
	case OpAdd:
		a, _, err = s.Client.AddService(ctx, lb, hcloud.LoadBalancerAddServiceOpts{
			Protocol: w.Protocol, ListenPort: hcloud.Ptr(op.Port), DestinationPort: hcloud.Ptr(w.DestinationPort), Proxyprotocol: hcloud.Ptr(w.Proxyprotocol),
			HealthCheck: &hcloud.LoadBalancerAddServiceOptsHealthCheck{Protocol: hc.Protocol, Port: hcloud.Ptr(hc.Port),
				Interval: hcloud.Ptr(hc.Interval), Timeout: hcloud.Ptr(hc.Timeout), Retries: hcloud.Ptr(hc.Retries)},
		})
	case OpUpdate:
		a, _, err = s.Client.UpdateService(ctx, lb, op.Port, hcloud.LoadBalancerUpdateServiceOpts{
			Protocol: w.Protocol, DestinationPort: hcloud.Ptr(w.DestinationPort), Proxyprotocol: hcloud.Ptr(w.Proxyprotocol),
			HealthCheck: &hcloud.LoadBalancerUpdateServiceOptsHealthCheck{Protocol: hc.Protocol, Port: hcloud.Ptr(hc.Port),
				Interval: hcloud.Ptr(hc.Interval), Timeout: hcloud.Ptr(hc.Timeout), Retries: hcloud.Ptr(hc.Retries)},
		})
	default:
		return nil, fmt.Errorf("service on port %d: unknown change %d", op.Port, op.Kind)
	}
	return a, err
}

// reconcileTargets removes the public-IP targets of the selector, then
// adds it over private IPs.
func (s *Service) reconcileTargets(ctx context.Context, lb *hcloud.LoadBalancer, d TargetDiff) error {
	for _, sel := range d.Remove {
		if err := s.do(ctx, lb, "remove the public target", func() (*hcloud.Action, error) {
			a, _, err := s.Client.RemoveLabelSelectorTarget(ctx, lb, sel)
			return a, err
		}); err != nil {
			return err
		}
	}
	if d.Add == "" {
		return nil
	}
	return s.do(ctx, lb, "add the target", func() (*hcloud.Action, error) {
		a, _, err := s.Client.AddLabelSelectorTarget(ctx, lb, hcloud.LoadBalancerAddLabelSelectorTargetOpts{Selector: d.Add, UsePrivateIP: hcloud.Ptr(true)})
		return a, err
	})
}
