package steps

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	"golang.org/x/sync/errgroup"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/reconcile/server"
	"github.com/ohmytalos/ohmytalos/internal/reconcile/volume"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// Servers creates every node from its snapshot with its machine config as
// user_data, attaches it to the network at its fixed private IP, and
// powers it on. Phases run for all nodes at once, so the API sees one
// request per node per phase plus batched action polls.
type Servers struct {
	d       *Deps
	configs *Configs // renders (and caches) the machine configs
}

// Name implements engine.Step.
func (s *Servers) Name() engine.StepName { return StepServers }

// Title implements engine.Step.
func (s *Servers) Title() string { return "Servers: create, attach, power on" }

// createParallel bounds concurrent creations, well inside the rate limit.
const createParallel = 8

func serverKey(name string) string { return "server/" + name }

func serverLabels(sp *spec.Spec, id string, n spec.Node) map[string]string {
	extra := map[string]string{cloud.LabelPool: n.Pool, cloud.LabelNode: n.Name}
	for _, p := range sp.Pools {
		if p.Name == n.Pool && p.InLoadBalancer() {
			extra[cloud.LabelIngress] = "true"
		}
	}
	return cloud.WithClusterID(cloud.ClusterLabels(sp.Name, n.Role, extra), id)
}

// Plan implements engine.Step.
func (s *Servers) Plan(ctx context.Context, env *engine.Env) (engine.Plan, error) {
	p := engine.Plan{}
	c := s.d.planClient(ctx, env, &p)
	var (
		svc    *server.Service
		listed serverFinder
		netw   *hcloud.Network
	)
	if c != nil {
		var err error
		svc = s.serverService(c)
		if listed, err = listServers(ctx, svc, env.Spec.Name); err != nil {
			return p, err
		}
		if netw, err = findNetwork(ctx, c, env.State, env.Spec.Name); err != nil {
			return p, err
		}
	}
	for _, n := range env.Spec.Nodes() {
		item := engine.PlanItem{Action: stateAction(env, serverKey(n.Name)), Kind: "server", Name: n.Name,
			Detail: fmt.Sprintf("%s in %s, %s", n.ServerType, n.Location, n.PrivateIP)}
		if c != nil {
			var err error
			if item, err = s.planServer(ctx, svc, listed, env, n, netw, item); err != nil {
				return p, err
			}
		}
		p.Items = append(p.Items, item)
		if v := poolVolume(env.Spec, n.Pool); v > 0 {
			a := engine.ActionReuse
			if item.Action == engine.ActionCreate {
				a = engine.ActionCreate
			}
			p.Items = append(p.Items, engine.PlanItem{Action: a, Kind: "volume", Name: n.Name + "-data", Detail: fmt.Sprintf("%d GB, encrypted by Talos", v)})
		}
	}
	return p, nil
}

func poolVolume(sp *spec.Spec, pool string) int {
	for _, p := range sp.Pools {
		if p.Name == pool {
			return p.VolumeSize
		}
	}
	return 0
}

// Apply implements engine.Step.
func (s *Servers) Apply(ctx context.Context, env *engine.Env, emit engine.Emit) error {
	c, err := s.d.HCloud(ctx, env.Spec)
	if err != nil {
		return err
	}
	sp := env.Spec
	if _, err := applyClusterID(env); err != nil {
		return err
	}
	netw, err := findNetwork(ctx, c, env.State, sp.Name)
	if err != nil {
		return err
	}
	if netw == nil {
		return errors.New("the cluster network does not exist yet: run the network step first")
	}
	configs, err := s.configs.renderAll(ctx, env)
	if err != nil {
		return err
	}
	svc := s.serverService(c)
	listed, err := listServers(ctx, svc, sp.Name)
	if err != nil {
		return err
	}
	nodes := sp.Nodes()
	servers := make([]*hcloud.Server, len(nodes))
	var (
		mu      sync.Mutex
		actions []*hcloud.Action
	)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(createParallel)
	for i, n := range nodes {
		g.Go(func() error {
			sv, acts, err := s.ensureServer(gctx, svc, listed, env, emit, n, netw, func(ctx context.Context) (*hcloud.Server, []*hcloud.Action, error) {
				return s.create(ctx, c, env, emit, n, configs[n.Pool].Config)
			})
			if err != nil {
				return err
			}
			servers[i] = sv
			mu.Lock()
			actions = append(actions, acts...)
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if err := s.wait(ctx, c, emit, actions, "create"); err != nil {
		return err
	}
	if err := s.attach(ctx, c, emit, nodes, servers, netw); err != nil {
		return err
	}
	if err := s.powerOn(ctx, c, emit, nodes, servers); err != nil {
		return err
	}
	s.d.rateEvent(emit)
	return nil
}

// create makes one server (and its volume); ensure checkpoints its ID
// before anything is waited for.
func (s *Servers) create(ctx context.Context, c *hcloud.Client, env *engine.Env, emit engine.Emit, n spec.Node, userData []byte) (*hcloud.Server, []*hcloud.Action, error) {
	sp := env.Spec
	img, err := snapshotFor(env, n)
	if err != nil {
		return nil, nil, err
	}
	pgKey, pgName, _ := placementGroup(sp.Name, n.Pool, n.Index)
	pg, ok := env.State.Resource(pgKey)
	if !ok {
		return nil, nil, fmt.Errorf("placement group %s does not exist yet: run the pools step first", pgName)
	}
	opts := hcloud.ServerCreateOpts{
		Name: n.Name, ServerType: &hcloud.ServerType{Name: n.ServerType}, Image: img,
		Location: &hcloud.Location{Name: n.Location}, UserData: string(userData), Labels: serverLabels(sp, env.State.ClusterID(), n),
		StartAfterCreate: hcloud.Ptr(false), PlacementGroup: &hcloud.PlacementGroup{ID: pg.ID},
		PublicNet: &hcloud.ServerCreatePublicNet{EnableIPv4: sp.PublicNetwork.IPv4, EnableIPv6: sp.PublicNetwork.IPv6},
	}
	var acts []*hcloud.Action
	if size := poolVolume(sp, n.Pool); size > 0 {
		vol, act, err := s.volume(ctx, c, env, emit, n, size)
		if err != nil {
			return nil, nil, err
		}
		if act != nil {
			if err := s.d.waiter(c).WaitFor(ctx, act); err != nil {
				return nil, nil, fmt.Errorf("create volume for %s: %w", n.Name, err)
			}
		}
		opts.Volumes = []*hcloud.Volume{vol}
		opts.Automount = hcloud.Ptr(false)
	}
	// Recorded first: a server created by a run killed right after it
	// still runs these patches.
	if err := s.recordPatches(env, n); err != nil {
		return nil, nil, err
	}
	r, _, err := c.Server.Create(ctx, opts)
	if err != nil {
		if hcloud.IsError(err, hcloud.ErrorCodeResourceUnavailable) {
			return nil, nil, fmt.Errorf("server type %s is not available in %s right now (%w): pick another location or type for pool %s", n.ServerType, n.Location, err, n.Pool)
		}
		// A uniqueness error is returned as it is: ensure adopts the
		// server an earlier attempt made when its response was lost.
		return nil, nil, fmt.Errorf("create server %s: %w", n.Name, err)
	}
	if r.Action != nil {
		acts = append(acts, r.Action)
	}
	acts = append(acts, r.NextActions...)
	return r.Server, acts, nil
}

// recordPatches records the patches of the config a new server boots.
func (s *Servers) recordPatches(env *engine.Env, n spec.Node) error {
	ps, err := groupPatches(env.Spec)
	if err != nil {
		return err
	}
	return s.configs.recordApplied(env, n.Name, ps[n.Pool])
}

func (s *Servers) volume(ctx context.Context, c *hcloud.Client, env *engine.Env, emit engine.Emit, n spec.Node, size int) (*hcloud.Volume, *hcloud.Action, error) {
	labels := cloud.WithClusterID(cloud.ClusterLabels(env.Spec.Name, "volume", map[string]string{cloud.LabelNode: n.Name, cloud.LabelPool: n.Pool}), env.State.ClusterID())
	w := volume.Want{Node: n.Name, Size: size, Location: n.Location, Labels: labels}
	return s.ensureVolume(ctx, volume.New(&c.Volume, &c.Action), env, emit, "volume/"+n.Name, w)
}

// wait waits for many actions at once: one poll covers them all.
func (s *Servers) wait(ctx context.Context, c *hcloud.Client, emit engine.Emit, acts []*hcloud.Action, what string) error {
	if len(acts) == 0 {
		return nil
	}
	done := 0
	return s.d.waiter(c).WaitForFunc(ctx, func(a *hcloud.Action) error {
		switch a.Status {
		case hcloud.ActionStatusSuccess:
			done++
			emit(engine.Event{Kind: engine.KindProgress, Resource: "servers/" + what, Fraction: float64(done) / float64(len(acts)),
				Message: fmt.Sprintf("%s: %d of %d actions finished", what, done, len(acts))})
		case hcloud.ActionStatusError:
			return fmt.Errorf("%s action %d (%s) failed: %w", what, a.ID, a.Command, a.Error())
		}
		return nil
	}, acts...)
}

func attachedTo(sv *hcloud.Server, netw *hcloud.Network) bool { return server.AttachedTo(sv, netw) }

func (s *Servers) attach(ctx context.Context, c *hcloud.Client, emit engine.Emit, nodes []spec.Node, servers []*hcloud.Server, netw *hcloud.Network) error {
	return s.everyServer(ctx, c, emit, nodes, "attach", func(ctx context.Context, i int) (*hcloud.Action, string, error) {
		if attachedTo(servers[i], netw) {
			return nil, "", nil
		}
		a, _, err := c.Server.AttachToNetwork(ctx, servers[i], hcloud.ServerAttachToNetworkOpts{Network: netw, IP: net.ParseIP(nodes[i].PrivateIP)})
		if hcloud.IsError(err, hcloud.ErrorCodeServerAlreadyAttached) {
			return nil, "", nil
		}
		if err != nil {
			return nil, "", fmt.Errorf("attach %s to the network at %s: %w", nodes[i].Name, nodes[i].PrivateIP, err)
		}
		return a, "private IP " + nodes[i].PrivateIP, nil
	})
}

func (s *Servers) powerOn(ctx context.Context, c *hcloud.Client, emit engine.Emit, nodes []spec.Node, servers []*hcloud.Server) error {
	return s.everyServer(ctx, c, emit, nodes, "power on", func(ctx context.Context, i int) (*hcloud.Action, string, error) {
		if servers[i].Status == hcloud.ServerStatusRunning || servers[i].Status == hcloud.ServerStatusStarting {
			return nil, "", nil
		}
		a, _, err := c.Server.Poweron(ctx, servers[i])
		if err != nil {
			return nil, "", fmt.Errorf("power on %s: %w", nodes[i].Name, err)
		}
		return a, "powering on", nil
	})
}

// everyServer runs act for every node at once (bounded), retrying while a
// server is locked, reports each started action, then waits for all of
// them with batched polls. act returns a nil action when nothing is to do.
func (s *Servers) everyServer(ctx context.Context, c *hcloud.Client, emit engine.Emit, nodes []spec.Node, what string,
	act func(ctx context.Context, i int) (*hcloud.Action, string, error)) error {
	var mu sync.Mutex
	var acts []*hcloud.Action
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(createParallel)
	for i := range nodes {
		g.Go(func() error {
			var a *hcloud.Action
			var msg string
			err := s.d.whileLocked(gctx, func() (err error) {
				a, msg, err = act(gctx, i)
				return err
			})
			if err != nil || a == nil {
				return err
			}
			emit(engine.Event{Kind: engine.KindResource, Action: engine.ActionUpdate, Resource: "server/" + nodes[i].Name, Message: msg})
			mu.Lock()
			acts = append(acts, a)
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return s.wait(ctx, c, emit, acts, what)
}

// whileLocked retries fn while Hetzner answers "locked" (another action,
// such as an adopted server's create, is still running on the resource):
// hcloud-go retries conflicts, not locks.
func (d *Deps) whileLocked(ctx context.Context, fn func() error) error {
	for tries := 0; ; tries++ {
		err := fn()
		if !hcloud.IsError(err, hcloud.ErrorCodeLocked) || tries >= 60 {
			return err
		}
		if err := sleep(ctx, d.poll()); err != nil {
			return err
		}
	}
}
