package steps

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/addons"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/hcloudfake"
)

func TestApplySeedThenNothingChanges(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "../examples/seed.yaml")
	var events []engine.Event
	if _, err := w.apply(t, context.Background(), func(ev engine.Event) { events = append(events, ev) }); err != nil {
		t.Fatal(err)
	}
	w.CheckCounts(t)
	lbTargets := 0
	for _, s := range w.SB.HCloud.Servers() {
		if s.Labels["ohmytalos.io/ingress"] == "true" {
			lbTargets++
		}
		if len(s.PrivateIPs) != 1 || !strings.HasPrefix(s.PrivateIPs[0], "10.0.") {
			t.Errorf("server %s private IPs %v", s.Name, s.PrivateIPs)
		}
	}
	if lbTargets != 2 {
		t.Errorf("ingress targets = %d, want the 2 workers", lbTargets)
	}
	env := w.env(t)
	kc, err := env.State.Secret(secretKubeconfig)
	if err != nil || !strings.Contains(string(kc), "clusters:") {
		t.Fatalf("kubeconfig: %v", err)
	}
	raw, _ := os.ReadFile(env.State.SecretPath(secretKubeconfig))
	if strings.Contains(string(raw), "clusters:") {
		t.Error("kubeconfig stored in clear")
	}
	// The metadata policy is applied once the cilium-operator registered
	// its CRD (the sandbox refuses it before, as Kubernetes does).
	kcl, err := w.deps().Kube(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	pol, err := kcl.Get(context.Background(), addons.CiliumPolicyAPIVersion, addons.CiliumClusterwidePolicyKind, "", addons.MetadataPolicyName)
	if err != nil {
		t.Fatalf("metadata policy after apply: %v", err)
	}
	if b, _ := json.Marshal(pol); !strings.Contains(string(b), addons.MetadataCIDR) || !strings.Contains(string(b), `"enableDefaultDeny":{"egress":false,"ingress":false}`) {
		t.Errorf("metadata policy = %s, want egressDeny to %s without default deny", b, addons.MetadataCIDR)
	}
	if len(w.SB.Talos.VIPHolders(w.Spec.Name)) != 1 {
		t.Errorf("VIP holders = %v", w.SB.Talos.VIPHolders(w.Spec.Name))
	}

	// Only the product's requests, per route: the sandbox's own
	// controllers (the cloud controller, the CSI driver, Talos moving the
	// VIP) call the same API on their own schedule, and a request of theirs
	// during the second apply would fail this test for nothing.
	before := productRequests(w.SB.HCloud.Stats())
	w.applyChangesNothing(t)
	if after := productRequests(w.SB.HCloud.Stats()); !maps.Equal(after, before) {
		t.Errorf("second apply sent API requests: before %v, after %v", before, after)
	}
	plans, err := engine.New(All(w.deps())...).Plan(context.Background(), w.env(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range plans {
		if n := p.Count(engine.ActionCreate); n != 0 {
			t.Errorf("plan %s still creates %d", p.Step, n)
		}
	}
	w.CheckCounts(t)
}

// productRequests is what ohmytalos itself asked the Hetzner API, per
// route (hcloud-go's User-Agent names the application first).
func productRequests(st hcloudfake.Stats) map[string]int {
	return maps.Clone(st.ByAgent["ohmytalos"])
}

// TestResumeAtEveryCheckpoint interrupts apply right after each resource
// is created and checkpointed, resumes in a new "process", and checks the
// end state is exactly the planned one.
func TestResumeAtEveryCheckpoint(t *testing.T) {
	t.Parallel()
	// How many checkpoints a clean run has.
	clean := newWorld(t, "../examples/seed.yaml")
	points := 0
	if _, err := clean.apply(t, context.Background(), func(ev engine.Event) {
		if ev.Kind == engine.KindResource && ev.Action == engine.ActionCreate {
			points++
		}
	}); err != nil {
		t.Fatal(err)
	}
	step := 1
	if testing.Short() {
		step = 4
	}
	// Every cancel before the last checkpoint must interrupt the run: a
	// run that finishes anyway proves nothing about resuming.
	wantInterrupted, interrupted := 0, atomic.Int32{}
	// Each checkpoint has its own world, so they run in parallel (go
	// test -parallel at a time); the group returns when all are done.
	t.Run("interrupt", func(t *testing.T) {
		for k := 1; k <= points; k += step {
			if k < points {
				wantInterrupted++
			}
			t.Run(fmt.Sprintf("after-%d", k), func(t *testing.T) {
				t.Parallel()
				resumeAfter(t, k, points, &interrupted)
			})
		}
	})
	if got := int(interrupted.Load()); got != wantInterrupted {
		t.Errorf("%d runs interrupted, want %d (one per checkpoint before the last of %d)", got, wantInterrupted, points)
	}
}

// resumeAfter cancels a seed apply right after its k-th checkpoint (of
// points), counts the run in interrupted when the cancel stopped it,
// resumes in a new "process" and checks the end state.
func resumeAfter(t *testing.T, k, points int, interrupted *atomic.Int32) {
	t.Helper()
	w := newWorld(t, "../examples/seed.yaml")
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	where := ""
	_, err := w.apply(t, ctx, func(ev engine.Event) {
		if ev.Kind == engine.KindResource && ev.Action == engine.ActionCreate {
			n++
			if n == k {
				where = ev.Resource
				cancel()
			}
		}
	})
	cancel()
	if k < points {
		// Not every layer wraps with %w (gRPC statuses, the engine's
		// "interrupted" summary), so the cause is read from the text.
		if err != nil && strings.Contains(err.Error(), context.Canceled.Error()) {
			interrupted.Add(1)
		} else {
			t.Errorf("run after the interrupt at %s (checkpoint %d of %d) returned %v, want an error caused by the cancel", where, k, points, err)
		}
	}
	if _, err := w.apply(t, context.Background(), nil); err != nil {
		t.Fatalf("resume after %s: %v", where, err)
	}
	w.CheckCounts(t)
	for _, s := range w.SB.HCloud.Servers() {
		if s.Labels["ohmytalos.io/temporary"] == "true" {
			t.Errorf("temporary server %s left after interrupt at %s", s.Name, where)
		}
	}
}
