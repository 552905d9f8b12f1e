package steps

import (
	"context"
	"log/slog"
	"slices"
	"strings"
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

// TestResumeFirst: the removal an earlier run left goes first; one the
// spec has again is dropped with a warning saying what to undo.
func TestResumeFirst(t *testing.T) {
	sp, err := spec.Load("../examples/seed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	st, err := state.Open(t.TempDir(), sp.Name, nil)
	if err != nil {
		t.Fatal(err)
	}
	env := &engine.Env{Spec: sp, State: st, Log: slog.New(slog.DiscardHandler)}
	rs := []removal{{Name: "demo-worker-4", Pool: "worker", Index: 4}, {Name: "demo-worker-3", Pool: "worker", Index: 3}}
	names := func(rs []removal) (out []string) {
		for _, r := range rs {
			out = append(out, r.Name)
		}
		return out
	}
	var evs []engine.Event
	emit := func(ev engine.Event) { evs = append(evs, ev) }

	for _, tc := range []struct {
		rec  scaleRecord
		want []string
		warn string
	}{
		{scaleRecord{}, []string{"demo-worker-4", "demo-worker-3"}, ""},
		{scaleRecord{Node: "demo-worker-3", Phase: phaseNode}, []string{"demo-worker-3", "demo-worker-4"}, ""},
		{scaleRecord{Node: "demo-worker-5", Phase: phaseVolume}, []string{"demo-worker-5", "demo-worker-4", "demo-worker-3"}, ""},
		{scaleRecord{Node: "demo-worker-2", Phase: phaseDrain}, []string{"demo-worker-4", "demo-worker-3"}, "kubectl uncordon demo-worker-2"},
		{scaleRecord{Node: "demo-cp-3", Phase: phaseEtcd}, []string{"demo-worker-4", "demo-worker-3"}, "talosctl reset"},
	} {
		evs = nil
		if err := st.PutData(dataScaleDown, tc.rec); err != nil {
			t.Fatal(err)
		}
		got, err := resumeFirst(env, rs, emit)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(names(got), tc.want) {
			t.Errorf("record %+v: order %v, want %v", tc.rec, names(got), tc.want)
		}
		warned := slices.ContainsFunc(evs, func(ev engine.Event) bool {
			return ev.Kind == engine.KindWarning && tc.warn != "" && strings.Contains(ev.Message, tc.warn)
		})
		if warned != (tc.warn != "") {
			t.Errorf("record %+v: events %+v, want a warning with %q", tc.rec, evs, tc.warn)
		}
		if _, still := inProgress(env); tc.warn != "" && still {
			t.Errorf("record %+v kept although the spec has the node again", tc.rec)
		}
	}
	if !slices.Equal(names(rs), []string{"demo-worker-4", "demo-worker-3"}) {
		t.Errorf("resumeFirst changed its input: %v", names(rs))
	}
}
