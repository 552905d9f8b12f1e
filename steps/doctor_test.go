package steps

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/doctor"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/sandbox"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/internal/state"
)

// doctorCluster is a spec applied (or partly applied) by the real engine
// and steps against an in-process sandbox.
type doctorCluster struct {
	sb   *sandbox.Sandbox
	deps *Deps
	env  *engine.Env
	eng  *engine.Engine
}

// startDoctorCluster starts a fast sandbox (durations in milliseconds) and
// wires the steps' Deps to it with SandboxDeps, as --sandbox does.
// edit rewrites the seed spec's YAML before it is parsed.
func startDoctorCluster(t *testing.T, edit func(string) string) *doctorCluster {
	t.Helper()
	return startDoctorClusterWith(t, edit, sandbox.Options{})
}

// appliedDoctorCluster is the seed spec applied in a fresh sandbox.
func appliedDoctorCluster(t *testing.T) *doctorCluster {
	t.Helper()
	c := startDoctorCluster(t, nil)
	if err := c.apply(t, engine.Options{}); err != nil {
		t.Fatalf("apply the seed spec in the sandbox: %v", err)
	}
	return c
}

// startDoctorClusterWith is startDoctorCluster with the sandbox options
// o (its durations, work dir and log are the doctor cluster's).
func startDoctorClusterWith(t *testing.T, edit func(string) string, o sandbox.Options) *doctorCluster {
	t.Helper()
	dir := t.TempDir()
	// The state's age identity lives in the test's folder: never the
	// operator's own key, and created on first use as the CLI does. It
	// and the chart cache are passed, not set in the environment, so that
	// doctor tests may run in parallel (t.Setenv forbids it).
	keyFile := filepath.Join(dir, "age.key")
	seed, err := os.ReadFile(filepath.Join("..", "examples", "seed.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(seed)
	if edit != nil {
		text = edit(text)
	}
	sp, err := spec.Parse([]byte(text))
	if err != nil {
		t.Fatalf("seed spec after edit does not parse: %v", err)
	}
	keys, err := state.LoadKeyring([]string{keyFile}, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	st, err := state.Open(filepath.Join(dir, ".ohmytalos", sp.Name), sp.Name, keys)
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "sandbox")
	if err := os.Mkdir(work, 0o700); err != nil {
		t.Fatal(err)
	}
	logs := &doctorLog{}
	t.Cleanup(func() { // runs after the sandbox is closed
		if t.Failed() {
			t.Logf("sandbox and steps warnings:\n%s", logs.String())
		}
	})
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	o.ActionDuration, o.BootDelay, o.WorkDir, o.Log = 5*time.Millisecond, 20*time.Millisecond, work, log
	sb, err := sandbox.Start(context.Background(), o)
	if err != nil {
		t.Fatalf("start sandbox: %v", err)
	}
	t.Cleanup(func() { sb.Close() })
	d := sandboxDeps(sb, log, "test")
	d.PollInterval, d.NodeTimeout = 10*time.Millisecond, testNodeTimeout // as newWorld
	d.LBHealthPoll = testLBHealthPoll
	d.ChartCache = filepath.Join(dir, "charts")
	return &doctorCluster{sb: sb, deps: d, env: &engine.Env{Spec: sp, State: st, Log: log}, eng: engine.New(All(d)...)}
}

// doctorLog keeps the sandbox's and steps' warnings for a failing test's
// log; goroutines of the sandbox may write after the test ended, so it
// never calls t.Log itself.
type doctorLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *doctorLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *doctorLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// apply runs the real engine with opts, logging warnings and failures.
func (c *doctorCluster) apply(t *testing.T, opts engine.Options) error {
	t.Helper()
	// A bound, not a timing: the seed apply takes about 45 s alone on
	// two cores (the ingress load balancer's first health checks
	// included), longer beside other tests.
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	opts.Redact = c.deps.Redact
	return c.eng.Run(ctx, c.env, opts, func(ev engine.Event) {
		if ev.Kind == engine.KindWarning || ev.Kind == engine.KindFailed {
			t.Logf("[%s] %s %s: %s", ev.Step, ev.Kind, ev.Resource, ev.Message)
		}
	})
}

// doctorResults runs the checks ids (every check without ids, as the
// doctor command does; some ids as doctor --check does) against the
// cluster through DoctorEnv, and indexes the results by ID. A test that
// judges one check runs only it: lb-owners alone waits 10 s between its
// two reads (doctor.DefaultOwnerReadGap).
func (c *doctorCluster) doctorResults(t *testing.T, ids ...string) map[string]doctor.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	env, closeSrc, notes := DoctorEnv(ctx, c.deps, c.env, DoctorOptions{})
	defer closeSrc()
	for _, n := range notes {
		t.Logf("doctor note: %s", n)
	}
	out := map[string]doctor.Result{}
	for _, r := range doctor.Run(ctx, env, ids, nil) {
		out[r.ID] = r
		t.Logf("doctor %s: %s %s", r.ID, r.Status, r.Explanation)
	}
	return out
}

// describeResult spells a result out for a failure message.
func describeResult(r doctor.Result) string {
	return string(r.Status) + ": " + r.Explanation + "\n  evidence: " + strings.Join(r.Evidence, "\n  evidence: ") + "\n  fix: " + r.Fix
}

// TestAppliedSeedServesAndPassesTheDoctor applies the seed spec once
// and reads the healthy cluster four ways, one subtest each (they were
// separate tests, each applying the seed): the ingress serves
// (checkIngressServes), every doctor check passes (checkDoctorHealthy),
// a deleted metadata policy is drift that plan shows and apply restores
// (checkMetadataPolicyRestored, after the healthy doctor), and
// version-skew judges specs edited after the apply (checkVersionSkew,
// last: it edits the spec in memory).
func TestAppliedSeedServesAndPassesTheDoctor(t *testing.T) {
	t.Parallel()
	needGo(t)
	// The real control plane (the default): helm needs its OpenAPI documents.
	c := appliedDoctorCluster(t)
	t.Run("ingress", func(t *testing.T) { checkIngressServes(t, c) })
	t.Run("doctor", func(t *testing.T) { checkDoctorHealthy(t, c) })
	t.Run("metadata-policy-restored", func(t *testing.T) { checkMetadataPolicyRestored(t, c) })
	t.Run("version-skew", func(t *testing.T) { checkVersionSkew(t, c) })
}

// checkDoctorHealthy is the true negative: on the seed cluster, applied
// by the real steps, every check passes or skips with its reason.
func checkDoctorHealthy(t *testing.T, c *doctorCluster) {
	rs := c.doctorResults(t)
	if len(rs) != len(doctor.Checks()) {
		t.Fatalf("%d results, want one per check (%d)", len(rs), len(doctor.Checks()))
	}
	for id, r := range rs {
		switch r.Status {
		case doctor.StatusPass:
		case doctor.StatusWarn:
			// A fresh cluster has no etcd backup yet: the one warning due.
			if id != "etcd" || !strings.Contains(r.Explanation, "no scheduled etcd backup") {
				t.Errorf("%s on a healthy cluster: %s", id, describeResult(r))
			}
		case doctor.StatusSkip:
			if strings.TrimSpace(r.Explanation) == "" {
				t.Errorf("%s skipped without saying why", id)
			}
		default:
			t.Errorf("%s on a healthy cluster: %s", id, describeResult(r))
		}
	}
	// The cluster checks must really have looked, not skipped.
	// lb-targets and lb-owners also close issue 20's "done when" with
	// checkIngressServes.
	for _, id := range []string{"vip-link", "vip-claimed", "etcd", "lb-targets", "lb-owners", "images", "lb-pending", "talos-endpoints", "version-skew", "egress", "image-pulls", "api-budget", "metadata-policy"} {
		if rs[id].Status != doctor.StatusPass && (id != "etcd" || rs[id].Status != doctor.StatusWarn) {
			t.Errorf("%s = %s on a healthy cluster, want pass: %s", id, rs[id].Status, describeResult(rs[id]))
		}
	}
	if r := rs["vip-link"]; !strings.Contains(strings.Join(r.Evidence, "\n"), `"eth1"`) {
		t.Errorf("vip-link evidence does not name eth1: %v", r.Evidence)
	}
	// The fake Talos nodes serve a Kubernetes API on the control planes
	// (talosfake/k8sapi.go) with the providerIDs the hcloud CCM would set.
	r := rs["provider-id"]
	if r.Status != doctor.StatusPass || !strings.Contains(strings.Join(r.Evidence, "\n"), "hcloud://") {
		t.Errorf("provider-id = %s, want pass with hcloud:// IDs: %s", r.Status, describeResult(r))
	}
}

// TestDoctorVIPOnMissingLink is the true positive of pitfall 1: with the
// VIP on the Debian name of the private NIC, bootstrap refuses, and the
// doctor's vip-link check fails on the same cluster.
func TestDoctorVIPOnMissingLink(t *testing.T) {
	t.Parallel()
	c := startDoctorCluster(t, func(s string) string {
		return strings.Replace(s, "  vip: 10.0.1.100\n", "  vip: 10.0.1.100\n  vipLink: enp7s0\n", 1)
	})
	if c.env.Spec.ControlPlane.VIPLink != "enp7s0" {
		t.Fatalf("spec edit did not set vipLink: %+v", c.env.Spec.ControlPlane)
	}
	err := c.apply(t, engine.Options{})
	if err == nil || !strings.Contains(err.Error(), "controlPlane.vipLink") || !strings.Contains(err.Error(), `"enp7s0"`) {
		t.Fatalf("apply error = %v, want bootstrap's controlPlane.vipLink refusal", err)
	}
	// Servers are up; resuming from bootstrap refuses again.
	if err := c.apply(t, engine.Options{From: "bootstrap"}); err == nil || !strings.Contains(err.Error(), "controlPlane.vipLink") {
		t.Fatalf("bootstrap again: %v, want the vipLink refusal", err)
	}
	if h := c.sb.Talos.VIPHolders(c.env.Spec.Name); len(h) != 0 {
		t.Errorf("the VIP is held by %v, want nobody (it is on a link that does not exist)", h)
	}
	rs := c.doctorResults(t, "vip-link", "vip-claimed")
	r := rs["vip-link"]
	if r.Status != doctor.StatusFail {
		t.Fatalf("vip-link = %s, want fail: %s", r.Status, describeResult(r))
	}
	if c := rs["vip-claimed"]; c.Status != doctor.StatusFail {
		t.Errorf("vip-claimed = %s, want fail (nobody holds the VIP): %s", c.Status, describeResult(c))
	}
	ev := strings.Join(r.Evidence, "\n")
	if !strings.Contains(ev, `link "enp7s0" does not exist`) {
		t.Errorf("vip-link evidence does not name the missing link: %v", r.Evidence)
	}
	if !strings.Contains(r.Fix, `"eth1"`) {
		t.Errorf("vip-link fix does not point at eth1: %s", r.Fix)
	}
}

// TestDoctorControlPlaneOnlyLoadBalancer is the true positive of pitfall
// 3: with the worker pool at zero servers the ingress load balancer has no
// target, and lb-targets fails, naming the exclude-from-LB label when the
// Kubernetes API is there to show it.
func TestDoctorControlPlaneOnlyLoadBalancer(t *testing.T) {
	t.Parallel()
	c := startDoctorCluster(t, func(s string) string {
		return strings.Replace(s, "    count: 2\n", "    count: 0\n", 1)
	})
	if n := len(c.env.Spec.Nodes()); n != 3 {
		t.Fatalf("spec has %d nodes, want the 3 control planes only", n)
	}
	if err := c.apply(t, engine.Options{}); err != nil {
		t.Fatalf("apply a control-plane-only cluster: %v", err)
	}
	rs := c.doctorResults(t, "lb-targets", "vip-link")
	r := rs["lb-targets"]
	if r.Status != doctor.StatusFail {
		t.Fatalf("lb-targets = %s, want fail: %s", r.Status, describeResult(r))
	}
	if !strings.Contains(strings.Join(r.Evidence, "\n"), "has no targets") {
		t.Errorf("lb-targets evidence does not say the load balancer has no targets: %v", r.Evidence)
	}
	// The sandbox serves the Kubernetes API, so the node labels are there
	// to explain the empty target list.
	if !strings.Contains(r.Explanation, doctor.LabelExcludeFromLB) {
		t.Errorf("lb-targets does not explain %s: %s", doctor.LabelExcludeFromLB, describeResult(r))
	}
	if r := rs["vip-link"]; r.Status != doctor.StatusPass {
		t.Errorf("vip-link = %s on this cluster, want pass: %s", r.Status, describeResult(r))
	}
}
