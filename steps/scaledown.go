package steps

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/kube"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// ScaleDown removes the servers the cluster created (recorded in the
// state) that the spec no longer has: a lowered count removes the
// highest-numbered servers, a pool removed from the spec goes entirely.
// Each node is cordoned and drained, a control plane leaves etcd (one at a
// time, with the remaining members checked healthy first), then its
// Kubernetes Node, its server and (unless the pool keeps volumes) its
// volume are deleted; the load balancers' label-selector targets follow
// the servers. The node in removal is recorded before anything is done,
// and every part is idempotent, so a run killed anywhere resumes.
//
// It is a step of its own, after the add-ons: the servers step never
// deletes (it reconciles the nodes the spec has), the nodes that stay are
// Ready with their workloads before pods are moved onto them, and a
// failed drain leaves everything else applied.
type ScaleDown struct{ d *Deps }

// Name implements engine.Step.
func (s *ScaleDown) Name() engine.StepName { return StepScaleDown }

// Title implements engine.Step.
func (s *ScaleDown) Title() string { return "Scale down: drain and remove nodes the spec dropped" }

// After implements engine.Dependent.
func (s *ScaleDown) After() []engine.StepName { return []engine.StepName{StepAddons} }

// dataScaleDown holds the removal in progress (a scaleRecord).
const dataScaleDown = "scale-down"

// Phases of a removal, in order, as the record names them.
const (
	phaseDrain  = "drain"
	phaseEtcd   = "etcd-leave"
	phaseNode   = "delete-node"
	phaseServer = "delete-server"
	phaseVolume = "delete-volume"
)

// scaleRecord is the removal in progress.
type scaleRecord struct {
	Node  string `json:"node"`
	Phase string `json:"phase"`
}

// removal is one node the state has and the spec does not.
type removal struct {
	Name     string
	ServerID int64
	Pool     string // spec.RoleControlPlane for control planes
	Index    int
}

func (r removal) controlPlane() bool { return r.Pool == spec.RoleControlPlane }

// removals lists the servers recorded in the state that are not nodes of
// the spec: workers first, then control planes; highest-numbered first
// within a pool.
func removals(env *engine.Env) []removal {
	sp := env.Spec
	want := map[string]bool{}
	for _, n := range sp.Nodes() {
		want[n.Name] = true
	}
	var out []removal
	for key, r := range env.State.Get().Resources {
		name, ok := strings.CutPrefix(key, "server/")
		if !ok || r.Kind != "server" || want[name] {
			continue
		}
		pool, idx := parseNodeName(sp.Name, name)
		out = append(out, removal{Name: name, ServerID: r.ID, Pool: pool, Index: idx})
	}
	slices.SortFunc(out, func(a, b removal) int {
		if a.controlPlane() != b.controlPlane() {
			if a.controlPlane() {
				return 1
			}
			return -1
		}
		return cmp.Or(cmp.Compare(a.Pool, b.Pool), cmp.Compare(b.Index, a.Index), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// parseNodeName splits "CLUSTER-POOL-N" (spec.Nodes' names; control
// planes are "CLUSTER-cp-N") into the pool and N.
func parseNodeName(cluster, name string) (pool string, index int) {
	rest := strings.TrimPrefix(name, cluster+"-")
	i := strings.LastIndex(rest, "-")
	if i < 0 {
		return rest, 0
	}
	index, _ = strconv.Atoi(rest[i+1:])
	pool = rest[:i]
	if pool == "cp" {
		pool = spec.RoleControlPlane
	}
	return pool, index
}

// keepsVolumes reports whether the pool (still in the spec) keeps the
// volumes of removed servers; a pool gone from the spec keeps none.
func keepsVolumes(sp *spec.Spec, pool string) bool {
	for _, p := range sp.Pools {
		if p.Name == pool {
			return p.KeepVolumes
		}
	}
	return false
}

// Plan implements engine.Step: every removal is a delete of its server,
// and of its volume unless the pool keeps it.
func (s *ScaleDown) Plan(_ context.Context, env *engine.Env) (engine.Plan, error) {
	p := engine.Plan{}
	for _, r := range removals(env) {
		what := "cordon, drain, delete the Kubernetes node and the server"
		if r.controlPlane() {
			what = "cordon, drain, leave etcd (one member at a time), delete the Kubernetes node and the server"
		}
		p.Items = append(p.Items, engine.PlanItem{Action: engine.ActionDelete, Kind: "server", Name: r.Name, Detail: what})
		if v, ok := env.State.Resource(volumeKey(r.Name)); ok {
			it := engine.PlanItem{Action: engine.ActionDelete, Kind: "volume", Name: v.Name, Detail: "its data is lost"}
			if keepsVolumes(env.Spec, r.Pool) {
				it = engine.PlanItem{Action: engine.ActionReuse, Kind: "volume", Name: v.Name, Detail: "kept (keepVolumes): a server of the pool reuses it when the count grows again"}
			}
			p.Items = append(p.Items, it)
		}
	}
	if rec, ok := inProgress(env); ok {
		p.Notes = append(p.Notes, fmt.Sprintf("an earlier run stopped while removing %s (at %s): apply finishes it", rec.Node, rec.Phase))
	}
	return p, nil
}

func volumeKey(node string) string { return "volume/" + node }

func inProgress(env *engine.Env) (scaleRecord, bool) {
	var rec scaleRecord
	found, err := env.State.GetData(dataScaleDown, &rec)
	return rec, found && err == nil && rec.Node != ""
}

// Apply implements engine.Step.
func (s *ScaleDown) Apply(ctx context.Context, env *engine.Env, emit engine.Emit) error {
	rs, err := resumeFirst(env, removals(env), emit)
	if err != nil {
		return err
	}
	if len(rs) == 0 {
		return nil
	}
	cps := false
	for i, r := range rs {
		emit(engine.Event{Kind: engine.KindProgress, Resource: "scale-down", Fraction: float64(i) / float64(len(rs)),
			Message: fmt.Sprintf("removing %s (%d of %d)", r.Name, i+1, len(rs))})
		if err := s.remove(ctx, env, r, emit); err != nil {
			return err
		}
		cps = cps || r.controlPlane()
	}
	if cps && env.Spec.Endpoint.Mode == spec.EndpointVIP {
		if err := s.waitVIP(ctx, env, emit); err != nil {
			return err
		}
	}
	s.d.rateEvent(emit)
	return nil
}

// resumeFirst puts the removal an earlier run left unfinished first. When
// the spec has that node again, the record is dropped with a warning: the
// node stays, maybe cordoned (or out of etcd), which the operator undoes.
func resumeFirst(env *engine.Env, rs []removal, emit engine.Emit) ([]removal, error) {
	rec, ok := inProgress(env)
	if !ok {
		return rs, nil
	}
	if slices.ContainsFunc(env.Spec.Nodes(), func(n spec.Node) bool { return n.Name == rec.Node }) {
		undo := "it is cordoned: run kubectl uncordon " + rec.Node
		if rec.Phase != phaseDrain {
			undo = "it may have left etcd and lost its Kubernetes node: reset it (talosctl reset) so that it joins again"
		}
		emit(engine.Event{Kind: engine.KindWarning, Resource: "node/" + rec.Node,
			Message: fmt.Sprintf("an earlier run was removing %s (at %s) and the spec has it again: it stays, but %s", rec.Node, rec.Phase, undo)})
		return rs, env.State.PutData(dataScaleDown, scaleRecord{})
	}
	emit(engine.Event{Kind: engine.KindLog, Resource: "server/" + rec.Node, Message: "resuming the removal an earlier run started (at " + rec.Phase + ")"})
	i := slices.IndexFunc(rs, func(r removal) bool { return r.Name == rec.Node })
	if i < 0 {
		// Its server record is gone already; only the volume may be left.
		pool, idx := parseNodeName(env.Spec.Name, rec.Node)
		return append([]removal{{Name: rec.Node, Pool: pool, Index: idx}}, rs...), nil
	}
	return append([]removal{rs[i]}, slices.Delete(slices.Clone(rs), i, i+1)...), nil
}

// leavingControlPlanes reports whether the state has control planes the
// spec no longer has.
func leavingControlPlanes(env *engine.Env) bool {
	return slices.ContainsFunc(removals(env), removal.controlPlane)
}

// record checkpoints the removal in progress before its phase starts.
func record(env *engine.Env, node, phase string) error {
	return env.State.PutData(dataScaleDown, scaleRecord{Node: node, Phase: phase})
}

// remove takes one node out of the cluster, phase by phase.
func (s *ScaleDown) remove(ctx context.Context, env *engine.Env, r removal, emit engine.Emit) error {
	if r.ServerID != 0 {
		kc, err := s.d.Kube(ctx, env)
		if err != nil {
			return err
		}
		if err := s.leaveCluster(ctx, env, kc, r, emit); err != nil {
			return err
		}
		if err := record(env, r.Name, phaseServer); err != nil {
			return err
		}
		if err := s.deleteServer(ctx, env, r, emit); err != nil {
			return err
		}
		// The kubelet may have registered the node again before its
		// server went; now nothing can.
		if err := kc.DeleteNode(ctx, r.Name); err != nil {
			return fmt.Errorf("delete Kubernetes node %s: %w", r.Name, err)
		}
	}
	if err := record(env, r.Name, phaseVolume); err != nil {
		return err
	}
	if err := s.dropVolume(ctx, env, r, emit); err != nil {
		return err
	}
	// A server added later under the same name starts with no upgrade
	// history: an interrupted upgrade of this one is not its own.
	if err := forgetUpgradeRecord(env, r.Name); err != nil {
		return err
	}
	return env.State.PutData(dataScaleDown, scaleRecord{})
}

// leaveCluster drains the node, takes a control plane out of etcd, and
// deletes the Kubernetes Node.
func (s *ScaleDown) leaveCluster(ctx context.Context, env *engine.Env, kc *kube.Client, r removal, emit engine.Emit) error {
	if err := record(env, r.Name, phaseDrain); err != nil {
		return err
	}
	if err := drainNode(ctx, kc, r.Name, s.d.nodeTimeout(), s.d.poll(), emit); err != nil {
		return err
	}
	if r.controlPlane() {
		if err := record(env, r.Name, phaseEtcd); err != nil {
			return err
		}
		if err := s.leaveEtcd(ctx, env, r, emit); err != nil {
			return err
		}
	}
	if err := record(env, r.Name, phaseNode); err != nil {
		return err
	}
	if err := kc.DeleteNode(ctx, r.Name); err != nil {
		return fmt.Errorf("delete Kubernetes node %s: %w", r.Name, err)
	}
	emit(engine.Event{Kind: engine.KindResource, Action: engine.ActionDelete, Resource: "node/" + r.Name, Message: "Kubernetes node deleted"})
	return nil
}
