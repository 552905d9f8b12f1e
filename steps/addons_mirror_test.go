package steps

import (
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/addons"
	"github.com/ohmytalos/ohmytalos/internal/charts"
	"github.com/ohmytalos/ohmytalos/internal/clients"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/chartrepo"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/internal/state"
	"github.com/ohmytalos/ohmytalos/internal/testworld"
)

// mirrorRun is the addons step of the seed spec (edited by edit) with
// the sandbox's stand-in charts behind a chart mirror, in a run that is
// a sandbox run or not; the cluster is never reached: touched says
// whether the step asked for it (KubeReady, its first look).
func mirrorRun(t *testing.T, sandboxRun bool, edit func(*spec.Spec, map[string]string)) (err error, touched bool, use *charts.MirrorUse) {
	t.Helper()
	repo, err := chartrepo.New()
	if err != nil {
		t.Fatal(err)
	}
	mirror := httptest.NewServer(repo)
	t.Cleanup(mirror.Close)
	standIn := map[string]string{}
	for _, c := range repo.Charts() {
		standIn[c.Name] = "sha256:" + c.Digest
	}
	sp, err := spec.Load("../examples/seed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(sp, standIn)
	}
	kf := testworld.NewKeyFile(t)
	keys, err := state.LoadKeyring([]string{kf}, kf)
	if err != nil {
		t.Fatal(err)
	}
	st, err := state.Open(t.TempDir(), sp.Name, keys)
	if err != nil {
		t.Fatal(err)
	}
	var asked atomic.Bool
	use = &charts.MirrorUse{}
	d := &Deps{Set: &clients.Set{
		Log: slog.New(slog.DiscardHandler), ChartMirror: mirror.URL, ChartCache: t.TempDir(), ChartMirrorUse: use,
		KubeReady: func(context.Context, func(string, float64)) error {
			asked.Store(true)
			return errors.New("the test's cluster does not answer")
		},
	}, Sandbox: sandboxRun}
	env := &engine.Env{Spec: sp, State: st, Log: slog.New(slog.DiscardHandler)}
	err = (&Addons{d}).Apply(context.Background(), env, func(engine.Event) {})
	return err, asked.Load(), use
}

// Outside the sandbox a chart mirror serves the pinned archives or
// nothing: the addons step fetches every chart before it installs any,
// so a later chart's refusal leaves the cluster untouched even though
// the first one passed.
func TestAddonsRefuseAMirroredChartBeforeInstallingAny(t *testing.T) {
	err, touched, use := mirrorRun(t, false, func(sp *spec.Spec, standIn map[string]string) {
		// Cilium, first in order, pinned by the operator to the archive
		// the mirror serves: it passes.
		sp.Addons.Cilium.Chart = &charts.Ref{Digest: standIn["cilium"]}
	})
	if err == nil {
		t.Fatal("a mirror serving other archives than the pinned ones was trusted outside the sandbox")
	}
	ccm, _ := addons.ChartOf(addons.HCloudCCM)
	mustContain(t, "error", err.Error(), "hcloudCCM", "hcloud-cloud-controller-manager", "digest mismatch", "chart mirror", ccm.Ref.Digest)
	if touched {
		t.Error("the step reached the cluster before every chart was checked")
	}
	line, _ := use.Summary()
	mustContain(t, "mirror summary", line, "1 chart fetched through it", "1 refused")
}

// In the sandbox the mirror's stand-ins are trusted, but a digest the
// spec pins itself is checked there too.
func TestAddonsSandboxMirrorChecksTheSpecsOwnDigest(t *testing.T) {
	// Past the charts, the step stops at the state's missing network.
	err, _, use := mirrorRun(t, true, nil)
	if fe := (*charts.FetchError)(nil); errors.As(err, &fe) {
		t.Fatalf("the sandbox's stand-ins were refused: %v", err)
	}
	line, _ := use.Summary()
	mustContain(t, "mirror summary", line, "charts fetched through it (the sandbox's stand-ins")
	wrong := "sha256:" + strings.Repeat("0", 64)
	err, touched, _ := mirrorRun(t, true, func(sp *spec.Spec, _ map[string]string) {
		sp.Addons.Extra = []spec.ExtraChart{{Name: "second-cni", Namespace: "extras",
			Chart: charts.Ref{Repository: "https://helm.cilium.io/", Name: "cilium", Version: "1.19.6", Digest: wrong}}}
	})
	if err == nil || touched {
		t.Fatalf("addons.extra[0].chart.digest was not checked against the sandbox's mirror: %v (cluster asked: %v)", err, touched)
	}
	mustContain(t, "error", err.Error(), "extra[0]", "digest mismatch", wrong)
}

// mustContain fails t for each of wants that text lacks, naming what.
func mustContain(t *testing.T, what, text string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(text, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, text)
		}
	}
}
