package steps

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/addons"
	"github.com/ohmytalos/ohmytalos/internal/doctor"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/kube"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// clusterReadiness is one look at the nodes and add-on workloads.
type clusterReadiness struct {
	wantNodes    int
	ready        int
	notReady     []string // "name: reason"
	noProviderID []string
	missingNodes int
	workloads    []string // not ready: "DaemonSet kube-system/cilium 2/5 ready"
	readyWL      int
	totalWL      int
	// checkReady and checkProvider say what counts (Cilium, CCM switched on).
	checkReady, checkProvider bool
	// lines are what each node and workload awaits, in the order read.
	lines []readinessLine
	// read: a read completed (the zero value knows nothing).
	read bool
}

// readinessLine is one node's or workload's state, as the wait reports it
// per resource ("node/demo-cp-1", "daemonset/cilium").
type readinessLine struct {
	resource, status string
	ok               bool
}

// nodeLine says what one node still awaits, given what counts.
func (r clusterReadiness) nodeLine(n kube.NodeInfo) readinessLine {
	hasID := strings.HasPrefix(n.ProviderID, "hcloud://")
	l := readinessLine{resource: "node/" + n.Name, ok: (n.Ready || !r.checkReady) && (hasID || !r.checkProvider)}
	switch {
	case n.Ready:
		l.status = "Ready"
	case r.checkReady:
		l.status = "NotReady: " + n.Reason
	default:
		l.status = "NotReady (no CNI switched on)"
	}
	switch {
	case hasID:
		l.status += ", provider ID " + n.ProviderID
	case r.checkProvider:
		l.status += "; waiting for the cloud controller to set its provider ID"
	}
	return l
}

// done reports whether nothing is missing.
func (r clusterReadiness) done() bool {
	return r.missingNodes == 0 && (!r.checkReady || len(r.notReady) == 0) &&
		(!r.checkProvider || len(r.noProviderID) == 0) && len(r.workloads) == 0
}

// progress is the one-line summary shown while waiting.
func (r clusterReadiness) progress() string {
	s := fmt.Sprintf("%d/%d nodes Ready", r.ready, r.wantNodes)
	if r.checkProvider {
		s += fmt.Sprintf(", %d with a provider ID", r.wantNodes-r.missingNodes-len(r.noProviderID))
	}
	return s + fmt.Sprintf(", %d/%d add-on workloads ready", r.readyWL, r.totalWL)
}

// missing names everything not there yet, for the timeout error.
func (r clusterReadiness) missing() string {
	var parts []string
	if r.missingNodes > 0 {
		parts = append(parts, fmt.Sprintf("%d of %d nodes have not registered with Kubernetes", r.missingNodes, r.wantNodes))
	}
	if r.checkReady && len(r.notReady) > 0 {
		parts = append(parts, "NotReady nodes: "+strings.Join(r.notReady, "; "))
	}
	if r.checkProvider && len(r.noProviderID) > 0 {
		parts = append(parts, "nodes without a provider ID (the cloud controller has not initialised them): "+strings.Join(r.noProviderID, ", "))
	}
	if len(r.workloads) > 0 {
		parts = append(parts, "workloads not ready: "+strings.Join(r.workloads, "; "))
	}
	return strings.Join(parts, "; ")
}

// addonWorkloads lists, for the doctor's addons check, the workloads of
// the add-ons the spec switches on.
func addonWorkloads(sp *spec.Spec) []doctor.WorkloadRef {
	rendered, err := addons.Render(sp, addons.Inputs{})
	if err != nil {
		return nil
	}
	var out []doctor.WorkloadRef
	for _, a := range rendered {
		for _, w := range a.Workloads {
			out = append(out, doctor.WorkloadRef{Addon: a.Name, Kind: w.Kind, Namespace: w.Namespace, Name: w.Name})
		}
	}
	return out
}

// readiness reads the nodes and the add-on workloads once.
func readiness(ctx context.Context, c *kube.Client, sp *spec.Spec, rendered []addons.Addon) (clusterReadiness, error) {
	on := addons.Enabled(sp)
	r := clusterReadiness{wantNodes: len(sp.Nodes()), checkReady: on[addons.Cilium], checkProvider: on[addons.HCloudCCM]}
	nodes, err := c.List(ctx, "v1", "Node", "", "")
	if err != nil {
		return r, err
	}
	for _, o := range nodes {
		n := kube.Node(o)
		if n.Ready {
			r.ready++
		} else {
			r.notReady = append(r.notReady, n.Name+": "+n.Reason)
		}
		if !strings.HasPrefix(n.ProviderID, "hcloud://") {
			r.noProviderID = append(r.noProviderID, n.Name)
		}
		r.lines = append(r.lines, r.nodeLine(n))
	}
	if len(nodes) < r.wantNodes {
		r.missingNodes = r.wantNodes - len(nodes)
	}
	sort.Strings(r.notReady)
	sort.Strings(r.noProviderID)
	for _, a := range rendered {
		for _, w := range a.Workloads {
			// Without Cilium, only host-network workloads (the cloud
			// controller) can start: do not wait for the others.
			if !on[addons.Cilium] && a.Name != addons.HCloudCCM {
				continue
			}
			r.totalWL++
			res := strings.ToLower(w.Kind) + "/" + w.Name
			o, err := c.Get(ctx, "apps/v1", w.Kind, w.Namespace, w.Name)
			if errors.Is(err, kube.ErrNotFound) {
				r.workloads = append(r.workloads, fmt.Sprintf("%s %s/%s does not exist", w.Kind, w.Namespace, w.Name))
				r.lines = append(r.lines, readinessLine{resource: res, status: a.Name + ": does not exist yet"})
				continue
			}
			if err != nil {
				return r, err
			}
			ready, want := kube.WorkloadReady(o)
			ok := want > 0 && ready >= want
			r.lines = append(r.lines, readinessLine{resource: res, ok: ok, status: fmt.Sprintf("%s: %d/%d ready", a.Name, ready, want)})
			if ok {
				r.readyWL++
				continue
			}
			r.workloads = append(r.workloads, fmt.Sprintf("%s %s/%s %d/%d ready", w.Kind, w.Namespace, w.Name, ready, want))
		}
	}
	r.read = true
	return r, nil
}

// lastLookTimeout bounds the one read a timed-out wait makes when no
// read completed within its bound.
const lastLookTimeout = 10 * time.Second

// wait polls until every node is Ready with a provider ID and the add-on
// workloads are ready; transient API errors are retried, fatal ones end it.
func (s *Addons) wait(ctx context.Context, c *kube.Client, env *engine.Env, rendered []addons.Addon, emit engine.Emit) error {
	if !addons.Enabled(env.Spec)[addons.Cilium] {
		emit(engine.Event{Kind: engine.KindWarning, Message: "addons.cilium is switched off: nodes stay NotReady until you install a CNI; waiting only for provider IDs"})
	}
	last := ""
	seen := map[string]string{}
	var lastErr error
	var r clusterReadiness
	for {
		cur, err := readiness(ctx, c, env.Spec, rendered)
		switch {
		case err != nil && ctx.Err() != nil:
			// The bound ran out during the read: report it as a
			// timeout, with what the last complete read found.
		case err != nil && !kube.IsRetryable(err):
			return fmt.Errorf("read cluster readiness: %w", err)
		case err != nil:
			if lastErr == nil || lastErr.Error() != err.Error() {
				emit(engine.Event{Kind: engine.KindProgress, Resource: "kubernetes-api",
					Message: "the Kubernetes API does not answer yet: " + s.d.Redact(err.Error())})
			}
			lastErr = err
		default:
			r, lastErr = cur, nil
			emitLines(r.lines, seen, emit)
			if p := r.progress(); p != last {
				frac := 0.0
				if total := r.wantNodes + r.totalWL; total > 0 {
					frac = float64(r.ready+r.readyWL) / float64(total)
				}
				emit(engine.Event{Kind: engine.KindProgress, Resource: "nodes", Fraction: frac, Message: p})
				last = p
			}
			if r.done() {
				return nil
			}
		}
		if werr := sleep(ctx, s.d.poll()); werr != nil {
			if !r.read {
				// No read completed within the bound (a slow API server
				// or a bound spent applying): one more look, on its own
				// short bound, so the error names what is missing.
				lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lastLookTimeout)
				if cur, err := readiness(lctx, c, env.Spec, rendered); err == nil {
					r = cur
				}
				cancel()
			}
			what := r.missing()
			if lastErr != nil {
				what += "; last API error: " + lastErr.Error() + s.d.unreachableReason(context.WithoutCancel(ctx), env)
			}
			return fmt.Errorf("the cluster is not ready after %s: %s. Run \"ohmytalos doctor --check nodes-ready,addons\" to see why, then \"ohmytalos apply --only addons\" to wait again: %w",
				s.d.nodeTimeout(), what, werr)
		}
	}
}

// emitLines reports each node's and workload's state when it changed since
// the last look (seen holds what was reported): Fraction 1 when it has what
// it awaits.
func emitLines(lines []readinessLine, seen map[string]string, emit engine.Emit) {
	for _, l := range lines {
		if seen[l.resource] == l.status {
			continue
		}
		seen[l.resource] = l.status
		frac := 0.0
		if l.ok {
			frac = 1
		}
		emit(engine.Event{Kind: engine.KindProgress, Resource: l.resource, Fraction: frac, Message: l.status})
	}
}
