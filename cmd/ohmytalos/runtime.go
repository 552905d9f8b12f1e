package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/clients"
	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/factory"
	"github.com/ohmytalos/ohmytalos/internal/safeurl"
	"github.com/ohmytalos/ohmytalos/internal/sandbox"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubereal/kubebin"
	"github.com/ohmytalos/ohmytalos/internal/secrets"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/steps"
)

// runtime is everything a command needs to plan or apply a spec.
type runtime struct {
	env     *engine.Env
	engine  *engine.Engine
	deps    *steps.Deps
	closers []func()
	// sandbox is the in-process sandbox under --sandbox, else nil.
	sandbox *sandbox.Sandbox
}

func (r *runtime) redact(s string) string { return r.deps.Redact(s) }

// Close releases the sandbox and log file.
func (r *runtime) Close() {
	for i := len(r.closers) - 1; i >= 0; i-- {
		r.closers[i]()
	}
}

// runtime builds the engine, its steps and their clients for a spec.
func (g *globals) runtime(ctx context.Context, s *spec.Spec) (*runtime, error) {
	rt := &runtime{}
	log, closeLog, err := g.logger()
	if err != nil {
		return nil, err
	}
	rt.closers = append(rt.closers, closeLog)
	if g.sandbox {
		// The in-process sandbox starts empty every time: state from an
		// earlier sandboxed run names resources that no longer exist.
		if err := g.resetSandboxState(g.stateDirFor(s.Name), s.Name); err != nil {
			rt.Close()
			return nil, err
		}
	}
	if !g.sandbox {
		// The marker marks the sandbox's own state: a real run's state
		// written there would be deleted by the next --sandbox run.
		if err := refuseSandboxState(g.stateDirFor(s.Name)); err != nil {
			rt.Close()
			return nil, err
		}
	}
	st, err := g.openState(s.Name)
	if err != nil {
		rt.Close()
		return nil, err
	}
	if g.sandbox {
		if err := markSandboxState(st.Dir()); err != nil {
			rt.Close()
			return nil, err
		}
	}
	deps, sb, closeDeps, err := g.deps(ctx, log)
	if err != nil {
		rt.Close()
		return nil, err
	}
	rt.closers = append(rt.closers, closeDeps)
	rt.deps, rt.sandbox = deps, sb
	g.secrets.AddSource(deps.SecretValues)
	rt.env = &engine.Env{Spec: s, State: st, Log: log}
	rt.engine = engine.New(steps.All(deps)...)
	return rt, nil
}

// deps builds the steps' clients: real ones, or the in-process sandbox's
// (then returned too).
func (g *globals) deps(ctx context.Context, log *slog.Logger) (*steps.Deps, *sandbox.Sandbox, func(), error) {
	cs := &clients.Set{
		Log: log, Version: version, Meter: cloud.NewMeter(nil),
		FactoryURL: os.Getenv(factory.URLEnv),
		HTTP:       &http.Client{Timeout: 5 * time.Minute},
		Resolver:   secrets.NewResolver(secrets.Options{}),
	}
	d := &steps.Deps{
		Set: cs,
		// SANDBOX only when the endpoint dialled is the sandbox's.
		Sandbox: cloud.IsSandbox(ctx, cloud.Endpoint("")),
	}
	// `ohmytalos sandbox serve` prints the mirror of its stand-in charts
	// (OHMYTALOS_CHART_MIRROR), which are checked against the mirror's own
	// index only when the Hetzner API is the sandbox's (d.Sandbox);
	// otherwise a mirror's charts must be the pinned archives, and one
	// ohmytalos pins no digest for is checked against the mirror's index
	// (charts.Source.Mirror). So a mirror is honoured only on this machine
	// (a loopback address, as sandbox serve's is), never a remote one.
	// The run names the mirror on stderr when it ends (reportMirror).
	if m := os.Getenv(chartMirrorEnv); m != "" && !g.sandbox {
		u, err := url.Parse(m)
		if err != nil || !safeurl.IsLoopbackHost(u.Hostname()) {
			return nil, nil, nil, fmt.Errorf("%s=%s: a chart mirror must be on this machine (a loopback address, as \"ohmytalos sandbox serve\" prints): the sandbox's stand-in charts, and charts ohmytalos pins no digest for, are checked only against the mirror's own index; unset %s to fetch the charts from their upstream repositories", chartMirrorEnv, m, chartMirrorEnv)
		}
		log.Info("charts come through a local mirror", "mirror", u.Redacted(), "sandbox", d.Sandbox)
		cs.ChartMirror = m
	}
	cs.ChartMirrorUse = g.mirrorUse
	if p, err := strconv.Atoi(os.Getenv("OHMYTALOS_RESCUE_SSH_PORT")); err == nil {
		d.SSHPort = p
	}
	if !g.sandbox {
		return d, nil, func() {}, nil
	}
	sb, err := sandbox.Start(ctx, sandboxDemoOptions(log))
	if err != nil {
		return nil, nil, nil, err
	}
	d = steps.SandboxDeps(sandboxEndpoints(sb), log, version)
	d.ChartMirrorUse = g.mirrorUse
	return d, sb, func() { sb.Close() }, nil
}

// sandboxDemoOptions paces the in-process sandbox like Hetzner, sped up:
// a whole cluster comes up in about a minute.
func sandboxDemoOptions(log *slog.Logger) sandbox.Options {
	return sandbox.Options{
		ActionDuration: 500 * time.Millisecond,
		Durations: map[string]time.Duration{
			"create_server": 2 * time.Second, "create_image": 3 * time.Second,
			"enable_rescue": time.Second, "create_load_balancer": 2 * time.Second,
		},
		BootDelay: 3 * time.Second,
		// Health checks at a tenth of Hetzner's: the ingress's first
		// check comes 1.5 s after its targets, not 15 s.
		HealthCheckScale: 0.1,
		Log:              log,
	}
}

// withRuntime loads the spec, builds the runtime and, when lock names a
// command, holds the cluster lock while fn runs.
func (g *globals) withRuntime(ctx context.Context, lock string, fn func(s *spec.Spec, rt *runtime) error) error {
	s, err := g.loadSpec()
	if err != nil {
		return err
	}
	rt, err := g.runtime(ctx, s)
	if err != nil {
		return err
	}
	defer rt.Close()
	if lock != "" {
		if err := rt.env.State.Lock(lock); err != nil {
			return err
		}
		defer rt.env.State.Unlock()
	}
	return fn(s, rt)
}

// chartMirrorEnv is sandbox.ChartMirrorEnv.
const chartMirrorEnv = sandbox.ChartMirrorEnv

// reportMirror prints, when the command fetched charts through a chart
// mirror, one line naming the mirror and how many (then a warning per
// chart ohmytalos pins no digest for) on w, the command's stderr: a
// mirror is never used silently, whatever --log-file says.
func (g *globals) reportMirror(w io.Writer) {
	line, warnings := g.mirrorUse.Summary()
	if line == "" {
		return
	}
	fmt.Fprintln(w, line)
	for _, s := range warnings {
		fmt.Fprintln(w, s)
	}
}

// sandboxEndpoints hands the in-process sandbox's addresses and token to
// the steps as plain values: cmd wires the sandbox, steps never import it.
func sandboxEndpoints(sb *sandbox.Sandbox) steps.SandboxEndpoints {
	return steps.SandboxEndpoints{
		HCloudURL: sb.HCloudURL, FactoryURL: sb.FactoryURL, IPEchoURL: sb.IPEchoURL,
		Token: sb.Token, RescueSSHPort: sb.RescueSSHPort, ChartsURL: sb.ChartsURL,
		KubeReady: kubeReady(sb.Kube),
	}
}

// kubeReady is the steps' wait for the in-process sandbox's Kubernetes
// build, reported every two seconds while it runs.
func kubeReady(b *kubebin.Build) func(context.Context, func(string, float64)) error {
	return func(ctx context.Context, progress func(string, float64)) error {
		_, err := b.WaitReporting(ctx, 2*time.Second, func(s kubebin.Status) {
			progress("waiting for the sandbox's Kubernetes control plane: "+s.Summary(), s.Fraction())
		})
		if err != nil {
			return fmt.Errorf("the sandbox's Kubernetes control plane is not available: %w", err)
		}
		return nil
	}
}
