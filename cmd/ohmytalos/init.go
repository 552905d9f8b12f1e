package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/spf13/cobra"

	"github.com/ohmytalos/ohmytalos/internal/doctor"
	"github.com/ohmytalos/ohmytalos/internal/factory"
	"github.com/ohmytalos/ohmytalos/internal/netplan"
	"github.com/ohmytalos/ohmytalos/internal/pricing"
	"github.com/ohmytalos/ohmytalos/internal/sandbox"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubereal/kubebin"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/steps"
	"github.com/ohmytalos/ohmytalos/ui"
	"github.com/ohmytalos/ohmytalos/ui/doctorui"
)

func newInitCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "init",
		Short: "Interactive wizard: secrets, images, network, pools, bootstrap",
		Long: `init walks you through creating a cluster, step by step, and runs the real
provisioning code at each step. In a folder with an interrupted cluster it
resumes at the first unfinished step. With --sandbox everything runs against
built-in fakes: try the whole flow without a Hetzner account.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runInit(cmd, g)
		},
	}
}

var errNoTTY = errors.New("init is an interactive wizard and needs a terminal; in scripts and CI use \"ohmytalos plan\" and \"ohmytalos apply\"")

// runInit starts the wizard on the spec in --config, or on a new default
// spec named after the folder.
func runInit(cmd *cobra.Command, g *globals) error {
	if !isTerminal(os.Stdin) || !isTerminal(os.Stdout) {
		return errNoTTY
	}
	s, resume, err := g.initSpec()
	if err != nil {
		return err
	}
	if g.logFile == "" {
		g.logFile = filepath.Join(filepath.Dir(g.config), ".ohmytalos", "ohmytalos.log")
		if err := os.MkdirAll(filepath.Dir(g.logFile), 0o700); err != nil {
			return err
		}
	}
	rt, err := g.runtime(cmd.Context(), s)
	if err != nil {
		return err
	}
	defer rt.Close()
	if err := rt.env.State.Lock("ohmytalos init"); err != nil {
		return err
	}
	defer rt.env.State.Unlock()
	fc := rt.deps.Factory()
	b := ui.Backend{
		Engine: rt.engine, Env: rt.env, SpecPath: g.config, Sandbox: rt.deps.Sandbox, LogPath: g.logFile,
		SandboxVault: sandboxVault(rt),
		Catalog: func(ctx context.Context) (*pricing.Catalog, error) {
			cat, _ := catalog(ctx, rt.deps, rt.env.Spec)
			if cat == nil {
				return nil, errors.New("no price list available")
			}
			return cat, nil
		},
		Extensions: func(ctx context.Context, v string) ([]factory.Extension, error) { return fc.OfficialExtensions(ctx, v) },
		Versions:   fc.Versions,
		Adapt:      func(s *spec.Spec) (netplan.Layout, pricing.Usage) { return s.Layout(), s.Usage() },
		Redact:     rt.redact,
		Preflight: func(ctx context.Context, s *spec.Spec) (steps.Findings, error) {
			env := *rt.env
			env.Spec = s
			fs, err := steps.Preflight(ctx, rt.deps, &env)
			return append(fs, steps.MirroredChartFindings(ctx, rt.deps, &env)...), err
		},
		OperatorAddress: func(ctx context.Context, s *spec.Spec) ([]string, string, error) {
			return steps.OperatorSources(ctx, rt.deps, s)
		},
		Doctor: func(r *lipgloss.Renderer) tea.Model {
			// Constructs only: the sources are gathered when the checks
			// run, in the screen's command goroutine.
			run := func(ctx context.Context, ids []string, report func(doctor.Result)) []doctor.Result {
				env, closeSrc, _ := steps.DoctorEnv(ctx, rt.deps, rt.env, steps.DoctorOptions{})
				defer closeSrc()
				return redactedRun(env, rt.redact)(ctx, ids, report)
			}
			return doctorui.New(run, doctor.Checks(), doctorui.Options{Sandbox: rt.deps.Sandbox, NoColor: g.noColor, Embedded: true, Renderer: r})
		},
	}
	if rt.sandbox != nil {
		b.Build = func() ui.BuildStatus { return buildStatus(rt.sandbox.Kube.Status()) }
	}
	rt.env.Log.Info("wizard started", "spec", g.config, "sandbox", rt.deps.Sandbox, "resume", resume)
	return ui.Run(cmd.Context(), b, ui.Options{NoColor: g.noColor, Resume: resume})
}

// sandboxVault is the bw reference to the sandbox vault's token item: the
// in-process sandbox's, or under "sandbox serve" the one its exports name;
// nil outside the sandbox.
func sandboxVault(rt *runtime) *spec.SecretRef {
	switch {
	case rt.sandbox != nil:
		return &spec.SecretRef{Provider: "bw", Ref: rt.sandbox.BWItemID, ServerURL: rt.sandbox.BWServeURL}
	case rt.deps.Sandbox && os.Getenv(sandbox.BWItemEnv) != "" && os.Getenv(sandbox.BWServeURLEnv) != "":
		return &spec.SecretRef{Provider: "bw", Ref: os.Getenv(sandbox.BWItemEnv), ServerURL: os.Getenv(sandbox.BWServeURLEnv)}
	}
	return nil
}

// initSpec loads --config when it exists (a cluster to resume or edit),
// else starts from the target cluster named after the folder.
func (g *globals) initSpec() (*spec.Spec, bool, error) {
	if _, err := os.Stat(g.config); err == nil {
		s, err := spec.Load(g.config)
		if err != nil {
			return nil, false, fmt.Errorf("%w\nfix the spec; for a new cluster use another folder: the state beside this spec (.ohmytalos/, with its secrets/) belongs to the cluster already applied", err)
		}
		return s, true, nil
	}
	return spec.Default(folderName(g.config)), false, nil
}

var nonLabel = regexp.MustCompile(`[^a-z0-9-]+`)

// folderName turns the spec's folder into a cluster name ("demo" when the
// folder gives nothing usable).
func folderName(config string) string {
	abs, err := filepath.Abs(filepath.Dir(config))
	if err != nil {
		return "demo"
	}
	n := strings.Trim(nonLabel.ReplaceAllString(strings.ToLower(filepath.Base(abs)), "-"), "-")
	if len(n) > 30 {
		n = strings.Trim(n[:30], "-")
	}
	if n == "" || n[0] < 'a' || n[0] > 'z' {
		return "demo"
	}
	return n
}

// buildStatus is the wizard's view of the sandbox's Kubernetes build.
func buildStatus(s kubebin.Status) ui.BuildStatus {
	if s.State == kubebin.Checking {
		// A warm cache is found within milliseconds: no panel that
		// flashes on every start.
		return ui.BuildStatus{}
	}
	b := ui.BuildStatus{Headline: s.Headline(), Summary: s.Summary(), Done: s.State == kubebin.Ready || s.State == kubebin.Failed, Err: s.Err}
	for _, p := range s.Programs {
		b.Programs = append(b.Programs, p.Line())
	}
	return b
}
