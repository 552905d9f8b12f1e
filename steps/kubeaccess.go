package steps

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"slices"
	"time"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// dataControlPlaneIPs records the control planes' public addresses once
// bootstrap has seen them: configs rendered afterwards list them in the
// API server's certSANs (see clusterInput).
const dataControlPlaneIPs = "control-plane-ips"

// cpAddresses is what dataControlPlaneIPs holds, in node order.
type cpAddresses struct {
	IPs []string `json:"ips"`
}

// kubeTarget is one API address the operator's kubeconfig names.
type kubeTarget struct {
	name string // cluster and context suffix: the cluster's or a node's name
	host string
}

// accessTargets lists where the operator's kubeconfig points, first the
// current context's address:
//   - endpoint.mode loadbalancer: the API load balancer's public IPv4;
//   - vip with access tailscale: the VIP itself, reached through the
//     control planes' advertised subnet route (nil: keep what Talos gave);
//   - vip with access public: every control plane's public IPv4, the first
//     one answering on 6443 first (the others become alternative contexts).
//
// Talos' Kubeconfig API returns cluster.controlPlane.endpoint from the
// machine config (the private VIP), which a laptop off the network cannot
// reach: hence the rewrite.
func (d *Deps) accessTargets(ctx context.Context, env *engine.Env, nodes []nodeAddr) ([]kubeTarget, error) {
	sp := env.Spec
	if sp.Endpoint.Mode == spec.EndpointLoadBalancer {
		ip, err := d.apiLBAddress(ctx, env)
		if err != nil {
			return nil, err
		}
		return []kubeTarget{{name: sp.Name, host: ip}}, nil
	}
	if sp.Endpoint.Access == spec.AccessTailscale {
		return nil, nil
	}
	var out []kubeTarget
	for _, n := range nodes {
		if n.node.Role == spec.RoleControlPlane {
			out = append(out, kubeTarget{name: n.node.Name, host: n.ip})
		}
	}
	if i := firstAnswering(ctx, out); i > 0 {
		out[0], out[i] = out[i], out[0]
	}
	if len(out) > 0 {
		out[0].name = sp.Name
	}
	return out, nil
}

// firstAnswering returns the index of the first target accepting a TCP
// connection on 6443, or 0 when none does yet.
func firstAnswering(ctx context.Context, ts []kubeTarget) int {
	for i, t := range ts {
		dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		var dl net.Dialer
		c, err := dl.DialContext(dctx, "tcp", net.JoinHostPort(t.host, "6443"))
		cancel()
		if err == nil {
			c.Close()
			return i
		}
	}
	return 0
}

// rewriteKubeconfig points the kubeconfig Talos returned at targets: the
// current context's cluster gets targets[0]; every other target gets its
// own cluster (same CA) and context "USER@NAME" (same user). It is read
// and written with client-go's clientcmd, as kubectl reads it. With no
// targets the kubeconfig is returned as is.
func rewriteKubeconfig(raw []byte, targets []kubeTarget) ([]byte, error) {
	if len(targets) == 0 {
		return raw, nil
	}
	kc, err := clientcmd.Load(raw)
	if err != nil {
		return nil, fmt.Errorf("the kubeconfig from Talos does not parse: %w", err)
	}
	cur := kc.CurrentContext
	cctx, ok := kc.Contexts[cur]
	if !ok {
		return nil, fmt.Errorf("the kubeconfig from Talos has no current context %q", cur)
	}
	cl, ok := kc.Clusters[cctx.Cluster]
	if !ok {
		return nil, fmt.Errorf("the kubeconfig from Talos has no cluster %q", cctx.Cluster)
	}
	u, err := url.Parse(cl.Server)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("the kubeconfig from Talos has no usable server (%q)", cl.Server)
	}
	port := u.Port()
	if port == "" {
		port = "6443"
	}
	serverFor := func(host string) string {
		return (&url.URL{Scheme: "https", Host: net.JoinHostPort(host, port)}).String()
	}
	cl.Server = serverFor(targets[0].host)
	for _, t := range targets[1:] {
		alt := cl.DeepCopy()
		alt.Server = serverFor(t.host)
		kc.Clusters[t.name] = alt
		altCtx := cctx.DeepCopy()
		altCtx.Cluster = t.name
		kc.Contexts[contextName(cctx.AuthInfo, t.name)] = altCtx
	}
	out, err := clientcmd.Write(*kc)
	if err != nil {
		return nil, fmt.Errorf("encode the kubeconfig: %w", err)
	}
	return out, nil
}

// contextName is "admin@NODE" for a Talos user "admin@CLUSTER".
func contextName(user, target string) string {
	for i := len(user) - 1; i >= 0; i-- {
		if user[i] == '@' {
			return user[:i+1] + target
		}
	}
	return user + "@" + target
}

// recordControlPlaneIPs stores the control planes' public addresses for
// the certSANs of configs rendered from now on.
func recordControlPlaneIPs(env *engine.Env, nodes []nodeAddr) error {
	var ips []string
	for _, n := range nodes {
		if n.node.Role == spec.RoleControlPlane {
			ips = append(ips, n.ip)
		}
	}
	var prev cpAddresses
	if _, err := env.State.GetData(dataControlPlaneIPs, &prev); err == nil && slices.Equal(prev.IPs, ips) {
		return nil
	}
	return env.State.PutData(dataControlPlaneIPs, cpAddresses{IPs: ips})
}

// controlPlaneSANs are the recorded public addresses that belong in the
// API server certificate in vip mode with public access.
func controlPlaneSANs(env *engine.Env) []string {
	sp := env.Spec
	if sp.Endpoint.Mode != spec.EndpointVIP || sp.Endpoint.Access == spec.AccessTailscale {
		return nil
	}
	var rec cpAddresses
	if _, err := env.State.GetData(dataControlPlaneIPs, &rec); err != nil {
		return nil
	}
	return rec.IPs
}

// kubeReady waits, in the sandbox, until the cluster's Kubernetes control
// plane can run (clients.Set.KubeReady: its binaries build on first use),
// reporting the wait as progress; outside the sandbox it returns at once.
func (d *Deps) kubeReady(ctx context.Context, emit engine.Emit) error {
	if d.KubeReady == nil {
		return nil
	}
	return d.KubeReady(ctx, func(msg string, fraction float64) {
		emit(engine.Event{Kind: engine.KindProgress, Resource: "sandbox/kubernetes", Message: msg, Fraction: fraction})
	})
}
