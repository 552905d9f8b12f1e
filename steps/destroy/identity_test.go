package destroy

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/internal/testworld"
	"github.com/ohmytalos/ohmytalos/steps"
)

// TestSecondCheckoutCannotDestroyTheFirst is the destroy half of issue
// 21's "done when": a checkout of the same spec in another folder, never
// applied, lists everything of the first cluster as unowned and deletes
// nothing; the first checkout's plan takes its own cluster.
func TestSecondCheckoutCannotDestroyTheFirst(t *testing.T) {
	t.Parallel()
	w, d := appliedSeed(t)
	first := w.env(t).State.ClusterID()
	other, err := spec.Load("../../examples/seed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	other.Firewall.Allow = []string{"203.0.113.7/32"}
	w2 := &world{&testworld.World{SB: w.SB, Dir: filepath.Join(t.TempDir(), ".ohmytalos", other.Name), Spec: other, KeyFile: w.KeyFile}}

	// destroy: nothing is the second checkout's; everything is listed as
	// unowned and kept.
	env2 := w2.env(t)
	p, err := NewPlan(context.Background(), w2.deps(), env2, Options{Images: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Items) != 0 || len(p.Servers)+len(p.Networks)+len(p.Firewalls)+len(p.LoadBalancers)+len(p.Groups)+len(p.Volumes)+len(p.Snapshots) != 0 {
		t.Fatalf("second checkout would delete %+v", p.Items)
	}
	if len(p.Unowned) != 10 {
		t.Errorf("unowned = %d, want the first cluster's 10 resources: %+v", len(p.Unowned), p.Unowned)
	}
	for _, u := range p.Unowned {
		if !strings.Contains(u.Why, "carries cluster ID "+first) {
			t.Errorf("unowned %s %s: %q does not say who owns it", u.Kind, u.Name, u.Why)
		}
	}
	if err := Run(context.Background(), w2.deps(), env2, p, func(engine.Event) {}); err != nil {
		t.Fatal(err)
	}
	w.CheckCounts(t)

	// The first checkout destroys its own cluster, and the snapshots it
	// built.
	env := w.env(t)
	own, err := NewPlan(context.Background(), d, env, Options{Images: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(own.Unowned) != 0 || len(own.Servers) != 5 || len(own.Snapshots) != 2 {
		t.Errorf("first checkout's plan: %d unowned, %d servers, %d snapshots", len(own.Unowned), len(own.Servers), len(own.Snapshots))
	}
}

// TestDestroyImagesKeepsReusedSnapshots: a second cluster (another name)
// reuses the first's snapshots; its destroy --images keeps them.
func TestDestroyImagesKeepsReusedSnapshots(t *testing.T) {
	t.Parallel()
	w, _ := appliedSeed(t)
	other, err := spec.Load("../../examples/seed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	other.Name = "second"
	w2 := &world{&testworld.World{SB: w.SB, Dir: t.TempDir(), Spec: other, KeyFile: w.KeyFile}}
	if _, err := w2.apply(t, context.Background(), engine.Options{Only: steps.StepImages}); err != nil {
		t.Fatal(err)
	}
	p, err := NewPlan(context.Background(), w2.deps(), w2.env(t), Options{Images: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Snapshots) != 0 || len(p.Kept) != 2 {
		t.Errorf("second cluster's destroy --images: %d snapshots to delete, %d kept; want 0 and 2", len(p.Snapshots), len(p.Kept))
	}
}
