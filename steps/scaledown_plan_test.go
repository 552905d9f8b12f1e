package steps

import (
	"context"
	"log/slog"
	"slices"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/internal/state"
)

// TestRemovalsFollowTheSpec: the servers the state has and the spec does
// not go, workers before control planes and the highest-numbered first; a
// pool gone from the spec goes entirely, with its volumes.
func TestRemovalsFollowTheSpec(t *testing.T) {
	sp, err := spec.Load("../examples/seed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sp.ControlPlane.Count = 1
	sp.Pools[0].Count = 1
	sp.Pools[0].KeepVolumes = true
	st, err := state.Open(t.TempDir(), sp.Name, nil)
	if err != nil {
		t.Fatal(err)
	}
	servers := []string{"demo-cp-1", "demo-cp-2", "demo-cp-3", "demo-worker-1", "demo-worker-2", "demo-worker-10", "demo-db-pool-1", "demo-db-pool-2"}
	for i, name := range servers {
		if err := st.PutResource(serverKey(name), state.Resource{Kind: "server", ID: int64(i + 1), Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"demo-worker-2", "demo-db-pool-2"} {
		if err := st.PutResource(volumeKey(name), state.Resource{Kind: "volume", ID: 100, Name: name + "-data"}); err != nil {
			t.Fatal(err)
		}
	}
	env := &engine.Env{Spec: sp, State: st, Log: slog.New(slog.DiscardHandler)}
	var got []string
	for _, r := range removals(env) {
		got = append(got, r.Name+"@"+r.Pool)
	}
	want := []string{"demo-db-pool-2@db-pool", "demo-db-pool-1@db-pool", "demo-worker-10@worker", "demo-worker-2@worker",
		"demo-cp-3@controlplane", "demo-cp-2@controlplane"}
	if !slices.Equal(got, want) {
		t.Errorf("removals:\n got %v\nwant %v", got, want)
	}
	p, err := (&ScaleDown{}).Plan(context.Background(), env)
	if err != nil {
		t.Fatal(err)
	}
	var items []string
	for _, it := range p.Items {
		items = append(items, string(it.Action)+" "+it.Kind+" "+it.Name)
	}
	wantItems := []string{"delete server demo-db-pool-2", "delete volume demo-db-pool-2-data", "delete server demo-db-pool-1",
		"delete server demo-worker-10", "delete server demo-worker-2", "reuse volume demo-worker-2-data",
		"delete server demo-cp-3", "delete server demo-cp-2"}
	if !slices.Equal(items, wantItems) {
		t.Errorf("plan:\n got %v\nwant %v", items, wantItems)
	}
}
