package steps

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	"golang.org/x/sync/errgroup"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/internal/talos"
	"github.com/ohmytalos/ohmytalos/internal/talos/talosapi"
)

// Bootstrap waits for every node's Talos API, bootstraps etcd on exactly
// one control plane (never twice: it asks etcd first) as soon as that one
// answers, while the others still boot; then it waits for all control
// planes to join and the VIP to be claimed, and stores the talosconfig and
// kubeconfig encrypted.
type Bootstrap struct{ d *Deps }

// Name implements engine.Step.
func (s *Bootstrap) Name() engine.StepName { return StepBootstrap }

// Title implements engine.Step.
func (s *Bootstrap) Title() string { return "Bootstrap: Talos, etcd, kubeconfig" }

// Plan implements engine.Step.
func (s *Bootstrap) Plan(ctx context.Context, env *engine.Env) (engine.Plan, error) {
	sp := env.Spec
	p := engine.Plan{Items: []engine.PlanItem{
		{Action: "wait", Kind: "talos-api", Name: fmt.Sprintf("%d nodes", len(sp.Nodes()))},
		{Action: "once", Kind: "etcd-bootstrap", Name: sp.Name + "-cp-1"},
	}}
	if sp.Endpoint.Mode == spec.EndpointVIP {
		p.Items = append(p.Items, engine.PlanItem{Action: "wait", Kind: "vip", Name: sp.ControlPlane.VIP, Detail: "claimed by one control plane"})
	}
	for _, name := range []string{secretTalosconfig, secretKubeconfig} {
		a := engine.ActionCreate
		if env.State.HasSecret(name) {
			a = engine.ActionReuse
		}
		p.Items = append(p.Items, engine.PlanItem{Action: a, Kind: name, Name: env.State.SecretPath(name), Detail: "age-encrypted"})
	}
	return p, nil
}

// nodeAddr is a node and the address its Talos API is reached on.
type nodeAddr struct {
	node spec.Node
	ip   string
}

// addresses resolves each node's public IPv4 from its server.
func (d *Deps) addresses(ctx context.Context, env *engine.Env) ([]nodeAddr, error) {
	c, err := d.HCloud(ctx, env.Spec)
	if err != nil {
		return nil, err
	}
	list, err := ownedServers(ctx, c, env.State, env.Spec.Name)
	if err != nil {
		return nil, err
	}
	byNode := map[string]*hcloud.Server{}
	for _, sv := range list {
		byNode[sv.Labels[cloud.LabelNode]] = sv
	}
	var out []nodeAddr
	for _, n := range env.Spec.Nodes() {
		sv := byNode[n.Name]
		if sv == nil {
			return nil, fmt.Errorf("server %s does not exist: run the servers step first", n.Name)
		}
		ip := sv.PublicNet.IPv4.IP
		if ip == nil || ip.IsUnspecified() {
			return nil, fmt.Errorf("server %s has no public IPv4: ohmytalos reaches the Talos API on it during bootstrap (publicNetwork.ipv4)", n.Name)
		}
		out = append(out, nodeAddr{node: n, ip: ip.String()})
	}
	return out, nil
}

// Apply implements engine.Step.
func (s *Bootstrap) Apply(ctx context.Context, env *engine.Env, emit engine.Emit) error {
	sp := env.Spec
	nodes, err := s.d.addresses(ctx, env)
	if err != nil {
		return err
	}
	tc, err := s.talosconfig(ctx, env, nodes, emit)
	if err != nil {
		return err
	}
	clients := make([]*talosapi.Client, len(nodes))
	defer func() {
		for _, c := range clients {
			if c != nil {
				c.Close()
			}
		}
	}()
	wctx, cancel := context.WithTimeout(ctx, s.d.nodeTimeout())
	defer cancel()
	g, gctx := errgroup.WithContext(wctx)
	for i := range nodes {
		g.Go(func() error {
			c, err := s.d.Talos(gctx, tc, nodes[i].ip)
			if err != nil {
				return fmt.Errorf("%s: %w", nodes[i].node.Name, err)
			}
			clients[i] = c
			if err := s.d.waitTalos(gctx, c, nodes[i], emit); err != nil {
				return fmt.Errorf("%s (%s): Talos API not ready within %s: %w%s", nodes[i].node.Name, nodes[i].ip,
					s.d.nodeTimeout(), err, s.d.unreachableReason(ctx, env))
			}
			emit(engine.Event{Kind: engine.KindResource, Action: "ready", Resource: "node/" + nodes[i].node.Name, Message: "Talos API up on " + nodes[i].ip})
			if i > 0 {
				return nil
			}
			// etcd needs only the first control plane (nodes are ordered
			// control planes first): bootstrap it while the others boot.
			return bootstrapFirst(gctx, c, sp, nodes[0], emit)
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	first := clients[0]
	if err := s.waitMembers(wctx, first, sp.ControlPlane.Count, emit); err != nil {
		return err
	}
	// A control plane the spec dropped may hold the VIP until it leaves
	// etcd: the scale-down step checks the VIP once it is gone.
	if sp.Endpoint.Mode == spec.EndpointVIP && !leavingControlPlanes(env) {
		if err := s.waitVIP(wctx, clients[:sp.ControlPlane.Count], nodes, sp.ControlPlane.VIP, emit); err != nil {
			return err
		}
	}
	hc, err := s.d.HCloud(ctx, sp)
	if err != nil {
		return err
	}
	if err := s.d.waitLoadBalancers(ctx, hc, env, emit); err != nil {
		return err
	}
	kc, err := first.Kubeconfig(ctx)
	if err != nil {
		return fmt.Errorf("fetch kubeconfig: %w", err)
	}
	return s.d.storeKubeconfig(ctx, env, kc, nodes, emit)
}

// bootstrapFirst checks the VIP's link and bootstraps etcd on the first
// control plane, once.
func bootstrapFirst(ctx context.Context, first *talosapi.Client, sp *spec.Spec, n nodeAddr, emit engine.Emit) error {
	if sp.Endpoint.Mode == spec.EndpointVIP {
		if err := checkVIPLink(ctx, first, sp); err != nil {
			return err
		}
	}
	did, err := first.BootstrapOnce(ctx)
	if err != nil {
		return fmt.Errorf("bootstrap etcd on %s: %w", n.node.Name, err)
	}
	msg := "etcd already bootstrapped: not calling bootstrap again"
	if did {
		msg = "etcd bootstrapped"
	}
	emit(engine.Event{Kind: engine.KindResource, Action: "bootstrap", Resource: "etcd/" + n.node.Name, Message: msg})
	return nil
}

// storeKubeconfig rewrites the kubeconfig Talos returned so it names an
// address the operator's machine reaches (accessTargets), and stores it
// encrypted: every later Kubernetes call (add-ons, doctor, kubeconfig
// command) reads this one.
func (d *Deps) storeKubeconfig(ctx context.Context, env *engine.Env, kc []byte, nodes []nodeAddr, emit engine.Emit) error {
	if err := recordControlPlaneIPs(env, nodes); err != nil {
		return err
	}
	targets, err := d.accessTargets(ctx, env, nodes)
	if err != nil {
		return err
	}
	kc, err = rewriteKubeconfig(kc, targets)
	if err != nil {
		return err
	}
	if err := env.State.PutSecret(secretKubeconfig, kc); err != nil {
		return err
	}
	where := "the VIP " + env.Spec.ControlPlane.VIP + " through Tailscale"
	if len(targets) > 0 {
		where = "https://" + net.JoinHostPort(targets[0].host, "6443")
		if len(targets) > 1 {
			where += fmt.Sprintf(" (and %d alternative contexts)", len(targets)-1)
		}
	}
	emit(engine.Event{Kind: engine.KindResource, Action: engine.ActionCreate, Resource: "kubeconfig",
		Message: "names " + where + "; stored encrypted in " + env.State.SecretPath(secretKubeconfig)})
	return nil
}

// talosconfig renders the client config for the control planes' public
// addresses and stores it encrypted.
func (s *Bootstrap) talosconfig(ctx context.Context, env *engine.Env, nodes []nodeAddr, emit engine.Emit) ([]byte, error) {
	b, err := bundle(env)
	if err != nil {
		return nil, err
	}
	c, err := s.d.clusterInput(ctx, env)
	if err != nil {
		return nil, err
	}
	var eps []string
	for _, n := range nodes {
		if n.node.Role == spec.RoleControlPlane {
			eps = append(eps, n.ip)
		}
	}
	tc, err := talos.Talosconfig(b, c, eps)
	if err != nil {
		return nil, err
	}
	if err := env.State.PutSecret(secretTalosconfig, tc); err != nil {
		return nil, err
	}
	emit(engine.Event{Kind: engine.KindResource, Action: engine.ActionCreate, Resource: "talosconfig", Message: "stored encrypted in " + env.State.SecretPath(secretTalosconfig)})
	return tc, nil
}

// checkVIPLink fails fast when the VIP's link does not exist on the node:
// Talos would silently never claim it (field notes, pitfall 1).
func checkVIPLink(ctx context.Context, c *talosapi.Client, sp *spec.Spec) error {
	link := vipLink(sp)
	links, err := c.Links(ctx)
	if err != nil {
		return fmt.Errorf("list links: %w", err)
	}
	var names []string
	for _, l := range links {
		if l.Name == link {
			return nil
		}
		names = append(names, l.Name)
	}
	return fmt.Errorf("controlPlane.vipLink: the VIP is configured on %q but the node has no such link (it has %s); Talos would never claim the VIP. Fix: leave vipLink empty (eth1 is the private NIC on Talos' hcloud platform) and run apply again",
		link, strings.Join(names, ", "))
}

// waitMembers polls etcd until every control plane is a voting member.
func (s *Bootstrap) waitMembers(ctx context.Context, c *talosapi.Client, want int, emit engine.Emit) error {
	last := -1
	for {
		ms, err := c.EtcdMembers(ctx)
		if err == nil {
			voters := 0
			for _, m := range ms {
				if !m.Learner {
					voters++
				}
			}
			if voters != last {
				emit(engine.Event{Kind: engine.KindProgress, Resource: "etcd", Fraction: float64(voters) / float64(want),
					Message: fmt.Sprintf("%d of %d control planes in etcd", voters, want)})
				last = voters
			}
			if voters >= want {
				return nil
			}
		} else if !talosapi.IsRetryable(err) {
			return fmt.Errorf("etcd members: %w", err)
		}
		if err := sleep(ctx, s.d.poll()); err != nil {
			return fmt.Errorf("waiting for %d control planes in etcd (last seen %d): %w", want, last, err)
		}
	}
}

// waitVIP polls the control planes until exactly one holds the VIP.
func (s *Bootstrap) waitVIP(ctx context.Context, cps []*talosapi.Client, nodes []nodeAddr, vip string, emit engine.Emit) error {
	want, err := netip.ParseAddr(vip)
	if err != nil {
		return fmt.Errorf("controlPlane.vip: %w", err)
	}
	for {
		var holders []string
		for i, c := range cps {
			addrs, err := c.Addresses(ctx)
			if err != nil {
				continue
			}
			for _, a := range addrs {
				if p, err := netip.ParsePrefix(a.CIDR); err == nil && p.Addr() == want {
					holders = append(holders, nodes[i].node.Name+" ("+a.Link+")")
				}
			}
		}
		if len(holders) == 1 {
			emit(engine.Event{Kind: engine.KindResource, Action: "claimed", Resource: "vip/" + vip, Message: "held by " + holders[0]})
			return nil
		}
		if err := sleep(ctx, s.d.poll()); err != nil {
			if len(holders) == 0 {
				return fmt.Errorf("no control plane claimed the VIP %s: run \"ohmytalos doctor --check vip-link,vip-claimed\" to see why: %w", vip, err)
			}
			return fmt.Errorf("the VIP %s is held by %d control planes (%s): %w", vip, len(holders), strings.Join(holders, ", "), err)
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// waitReport is how often a wait for a node reports that it still waits.
const waitReport = 10 * time.Second

// waitTalos waits for a node's Talos API, reporting progress while it
// does not answer: the address and port dialled, how long, the last error.
func (d *Deps) waitTalos(ctx context.Context, c *talosapi.Client, n nodeAddr, emit engine.Emit) error {
	addr := net.JoinHostPort(n.ip, "50000")
	return c.WaitReadyReporting(ctx, waitReport, func(waited time.Duration, last error) {
		emit(engine.Event{Kind: engine.KindProgress, Resource: "node/" + n.node.Name,
			Message: fmt.Sprintf("waiting for the Talos API at %s (%s of at most %s; last error: %s)", addr, waited, d.nodeTimeout(), d.Redact(last.Error()))})
	})
}
