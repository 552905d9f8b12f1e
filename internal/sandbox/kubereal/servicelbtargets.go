package kubereal

import (
	"context"
	"fmt"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	corev1 "k8s.io/api/core/v1"
)

// proxyProtocol is the uses-proxyprotocol annotation, else the
// environment's, else off.
func (l *lbClient) proxyProtocol(svc *corev1.Service) (bool, error) {
	return setting(svc, annLBProxyProtocol, l.env, envLBUsesProxyProtocol, false)
}

// reconcileServices is ReconcileHCLBServices: one TCP service per
// Service port, listening on the port and forwarding to its node port,
// health-checked over TCP on the node port; other listen ports go. The
// CCM leaves the health check's interval, timeout and retries and the
// proxy protocol to the API's defaults (15s, 10s, 3, off: Hetzner API
// reference, "Add Service"); hcloudfake requires them, so they are sent.
func (l *lbClient) reconcileServices(ctx context.Context, lb *hcloud.LoadBalancer, svc *corev1.Service) error {
	proxy, err := l.proxyProtocol(svc)
	if err != nil {
		return fmt.Errorf("hcops/LoadBalancerOps.ReconcileHCLBServices: %w", err)
	}

	have := map[int]bool{}
	for _, s := range lb.Services {
		have[s.ListenPort] = true
	}

	for _, p := range svc.Spec.Ports {
		if p.Protocol != "" && p.Protocol != corev1.ProtocolTCP {
			continue // the CCM warns: UnsupportedProtocolConfigured
		}

		listen, dest := int(p.Port), int(p.NodePort)

		var a *hcloud.Action

		if have[listen] {
			a, _, err = l.c.LoadBalancer.UpdateService(ctx, lb, listen, hcloud.LoadBalancerUpdateServiceOpts{
				DestinationPort: &dest, Protocol: hcloud.LoadBalancerServiceProtocolTCP, Proxyprotocol: &proxy,
				HealthCheck: &hcloud.LoadBalancerUpdateServiceOptsHealthCheck{Protocol: hcloud.LoadBalancerServiceProtocolTCP, Port: &dest},
			})
		} else {
			a, _, err = l.c.LoadBalancer.AddService(ctx, lb, hcloud.LoadBalancerAddServiceOpts{
				ListenPort: &listen, DestinationPort: &dest, Protocol: hcloud.LoadBalancerServiceProtocolTCP, Proxyprotocol: &proxy,
				HealthCheck: &hcloud.LoadBalancerAddServiceOptsHealthCheck{Protocol: hcloud.LoadBalancerServiceProtocolTCP, Port: &dest,
					Interval: new(15 * time.Second), Timeout: new(10 * time.Second), Retries: new(3)},
			})
		}

		delete(have, listen)

		if err == nil {
			err = l.c.Action.WaitFor(ctx, a)
		}

		if err != nil {
			return fmt.Errorf("hcops/LoadBalancerOps.ReconcileHCLBServices: %w", err)
		}
	}

	for port := range have {
		a, _, err := l.c.LoadBalancer.DeleteService(ctx, lb, port)
		if err == nil {
			err = l.c.Action.WaitFor(ctx, a)
		}

		if err != nil {
			return fmt.Errorf("hcops/LoadBalancerOps.ReconcileHCLBServices: port %d: %w", port, err)
		}
	}

	return nil
}

// reconcileTargets is ReconcileHCLBTargets: the nodes' servers are the
// targets, through their private IPs with use-private-ip (which needs the
// CCM's network); a target of another node, or with the other private-IP
// setting, is removed.
func (l *lbClient) reconcileTargets(ctx context.Context, lb *hcloud.LoadBalancer, svc *corev1.Service, nodes []*corev1.Node) error {
	private, err := setting(svc, annLBUsePrivateIP, l.env, envLBUsePrivateIP, false)
	if err != nil {
		return fmt.Errorf("%s: %w", opTargets, err)
	}

	if private && l.networkID == 0 {
		return fmt.Errorf("%s: use private ip: missing network id", opTargets)
	}

	want, have := serverIDs(nodes), map[int64]bool{}

	for _, t := range lb.Targets {
		if t.Type != hcloud.LoadBalancerTargetTypeServer || t.Server == nil || t.Server.Server == nil {
			continue
		}

		id := t.Server.Server.ID
		if want[id] != nil && t.UsePrivateIP == private {
			have[id] = true

			continue
		}

		a, _, err := l.c.LoadBalancer.RemoveServerTarget(ctx, lb, t.Server.Server)
		if err == nil {
			err = l.c.Action.WaitFor(ctx, a)
		}

		if err != nil {
			return fmt.Errorf("%s: target: %d: %w", opTargets, id, err)
		}
	}

	for id, n := range want {
		if have[id] {
			continue
		}

		a, _, err := l.c.LoadBalancer.AddServerTarget(ctx, lb, hcloud.LoadBalancerAddServerTargetOpts{Server: &hcloud.Server{ID: id}, UsePrivateIP: &private})
		if err == nil {
			err = l.c.Action.WaitFor(ctx, a)
		}

		if err != nil {
			return fmt.Errorf("%s: target %s: %w", opTargets, n.Name, err)
		}
	}

	return nil
}

// status is buildLoadBalancerStatusIngress: the hostname annotation, or
// the public IPv4 and (unless disabled) IPv6, then (unless disabled) the
// private IPs; IP mode Proxy with the proxy protocol, else VIP.
func (l *lbClient) status(lb *hcloud.LoadBalancer, svc *corev1.Service) (*corev1.LoadBalancerStatus, error) {
	if v, ok := svc.Annotations[annLBHostname]; ok {
		return &corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{Hostname: v}}}, nil
	}

	proxy, err := l.proxyProtocol(svc)
	if err != nil {
		return nil, err
	}

	mode := corev1.LoadBalancerIPModeVIP
	if proxy {
		mode = corev1.LoadBalancerIPModeProxy
	}

	var ips []string

	if lb.PublicNet.Enabled {
		ips = append(ips, lb.PublicNet.IPv4.IP.String())

		if off, err := setting(svc, annLBIPv6Disabled, l.env, envLBDisableIPv6, false); err != nil {
			return nil, err
		} else if !off {
			ips = append(ips, lb.PublicNet.IPv6.IP.String())
		}
	}

	if off, err := setting(svc, annLBDisablePrivIngr, l.env, envLBDisablePrivIngr, false); err != nil {
		return nil, err
	} else if !off {
		for _, pn := range lb.PrivateNet {
			ips = append(ips, pn.IP.String())
		}
	}

	st := &corev1.LoadBalancerStatus{}
	for _, ip := range ips {
		st.Ingress = append(st.Ingress, corev1.LoadBalancerIngress{IP: ip, IPMode: &mode})
	}

	return st, nil
}
