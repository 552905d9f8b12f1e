package kubereal

import (
	"context"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/ingressstandin"
)

// traefikStandin is the sandbox's Traefik on the real control plane:
// while a Ready pod of the traefik image (docker.io/traefik:TAG) is
// selected by a NodePort or LoadBalancer Service, every node answers on
// that Service's node ports as Cilium's kube-proxy replacement forwards
// them to Traefik, which answers with its default router's 404
// (ingressstandin). The listeners are on the nodes' loopback addresses:
// the ExternalIP (the server's public IPv4, where the sandbox's load
// balancer forwards and health-checks even use_private_ip targets,
// hcloudfake lb_targets.go health) and the InternalIP when it is one (a
// node without a private network). Node ports are in the API server's
// default --service-node-port-range 30000-32767, so they never meet
// talosfake's listeners on the same addresses (50000 Talos API, 6443
// Kubernetes API).
type traefikStandin struct {
	sim *Simulators
	l   ingressstandin.Listeners
}

func (t *traefikStandin) reconcile(context.Context) {
	t.l.Sync(t.want())
}

// want is the stand-in's "ip:port" -> TLS set from the informers' view.
func (t *traefikStandin) want() map[string]bool {
	want := map[string]bool{}

	ips := t.nodeIPs()
	if len(ips) == 0 {
		return want
	}

	svcs, err := t.sim.services.List(labels.Everything())
	if err != nil {
		return want
	}

	for _, svc := range svcs {
		if svc.Spec.Type != corev1.ServiceTypeNodePort && svc.Spec.Type != corev1.ServiceTypeLoadBalancer || !t.selectsReadyTraefik(svc) {
			continue
		}

		for _, p := range svc.Spec.Ports {
			if p.NodePort == 0 || p.Protocol != "" && p.Protocol != corev1.ProtocolTCP {
				continue
			}

			secure := ingressstandin.Secure(p.Name, p.TargetPort.String(), int64(p.Port))
			for _, ip := range ips {
				want[ingressstandin.Addr(ip, int64(p.NodePort))] = secure
			}
		}
	}

	return want
}

// nodeIPs are the nodes' bindable InternalIP and ExternalIP addresses.
func (t *traefikStandin) nodeIPs() []string {
	nodes, err := t.sim.nodes.List(labels.Everything())
	if err != nil {
		return nil
	}

	var ips []string

	for _, n := range nodes {
		for _, a := range n.Status.Addresses {
			if (a.Type == corev1.NodeInternalIP || a.Type == corev1.NodeExternalIP) && ingressstandin.Bindable(a.Address) && !slices.Contains(ips, a.Address) {
				ips = append(ips, a.Address)
			}
		}
	}

	return ips
}

// selectsReadyTraefik reports whether svc's selector matches a Ready,
// not terminating pod of its namespace with a traefik container.
func (t *traefikStandin) selectsReadyTraefik(svc *corev1.Service) bool {
	if len(svc.Spec.Selector) == 0 {
		return false
	}

	pods, err := t.sim.pods.Pods(svc.Namespace).List(labels.SelectorFromSet(svc.Spec.Selector))
	if err != nil {
		return false
	}

	for _, p := range pods {
		if p.DeletionTimestamp != nil || !podReady(p) {
			continue
		}

		for _, c := range p.Spec.Containers {
			if imageIs(c.Image, ingressstandin.Image) {
				return true
			}
		}
	}

	return false
}

// IngressAddrs lists the addresses the Traefik stand-in serves now
// ("ip:port" -> TLS), sorted for logs and tests.
func (s *Simulators) IngressAddrs() []string {
	if s.traefik == nil {
		return nil
	}

	open := s.traefik.l.Open()
	out := make([]string, 0, len(open))

	for a, secure := range open {
		out = append(out, a+" tls="+strconv.FormatBool(secure))
	}

	slices.Sort(out)

	return out
}
