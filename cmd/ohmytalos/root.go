package main

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/ohmytalos/ohmytalos/internal/charts"
	"github.com/ohmytalos/ohmytalos/internal/privatefile"
	"github.com/ohmytalos/ohmytalos/internal/secrets"
	"github.com/ohmytalos/ohmytalos/internal/spec"
	"github.com/ohmytalos/ohmytalos/internal/state"
)

// globals are the flags every command shares.
type globals struct {
	config   string
	stateDir string
	sandbox  bool
	noColor  bool
	logFile  string
	// secrets is every secret value this run has seen, redacted from
	// every command's error and output (see guardOutput).
	secrets *secrets.Set
	// mirrorUse tallies the charts this run fetched through a chart
	// mirror, printed on stderr when the command ends (reportMirror).
	mirrorUse *charts.MirrorUse
}

func newRootCmd() *cobra.Command {
	root, _ := newRoot()
	return root
}

// newRoot builds the command tree and returns the globals it shares, whose
// secret set main redacts the final error with.
func newRoot() (*cobra.Command, *globals) {
	g := &globals{secrets: &secrets.Set{}, mirrorUse: &charts.MirrorUse{}}
	root := &cobra.Command{
		Use:   "ohmytalos",
		Short: "Talos Linux Kubernetes on Hetzner Cloud: encrypted, highly available, resumable",
		Long: `ohmytalos builds a production-grade Talos Linux Kubernetes cluster on Hetzner Cloud.

Start with "ohmytalos init" (an interactive wizard), or write ohmytalos.yaml
yourself and run "ohmytalos plan" then "ohmytalos apply". Add --sandbox to
any command to run it against built-in fakes of Hetzner, Talos and the Image
Factory: nothing is created and no account is needed.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	pf := root.PersistentFlags()
	pf.StringVar(&g.config, "config", "ohmytalos.yaml", "cluster spec file")
	pf.StringVar(&g.stateDir, "state-dir", "", "state directory (default: .ohmytalos/NAME beside the spec)")
	pf.BoolVar(&g.sandbox, "sandbox", false, "run against the built-in sandbox (fake Hetzner, Talos, Image Factory); creates nothing real")
	pf.BoolVar(&g.noColor, "no-color", false, "disable colours (also honoured: NO_COLOR)")
	pf.StringVar(&g.logFile, "log-file", "", "write a debug log to this file (default: none; the wizard logs to .ohmytalos/ohmytalos.log)")
	root.PersistentPreRun = func(cmd *cobra.Command, args []string) {
		if os.Getenv("NO_COLOR") != "" {
			g.noColor = true
		}
	}
	root.AddCommand(
		newInitCmd(g), newPlanCmd(g), newApplyCmd(g), newCostCmd(g), newDoctorCmd(g),
		newDestroyCmd(g), newSchematicCmd(g), newTalosConfigCmd(g), newSandboxCmd(g),
		newKubeconfigCmd(g), newTalosconfigCmd(g), newImagesCmd(g), newVersionCmd(), newEtcdCmd(g),
		newAddonsCmd(g),
	)
	g.guardOutput(root)
	return root, g
}

// loadSpec reads the spec file named by --config.
func (g *globals) loadSpec() (*spec.Spec, error) {
	return spec.Load(g.config)
}

// clusterState opens the state of the cluster the spec file names.
func (g *globals) clusterState() (*state.Store, error) {
	s, err := g.loadSpec()
	if err != nil {
		return nil, err
	}
	return g.openState(s.Name)
}

// lockedState is clusterState locked by command (e.g. "ohmytalos etcd
// snapshot"); the caller unlocks it.
func (g *globals) lockedState(command string) (*state.Store, error) {
	st, err := g.clusterState()
	if err != nil {
		return nil, err
	}
	if err := st.Lock(command); err != nil {
		return nil, err
	}
	return st, nil
}

// stateDirFor is --state-dir or .ohmytalos/NAME beside the spec. An
// in-process sandbox keeps its state apart (.ohmytalos/.sandbox/NAME), so a
// sandboxed run can never mark a real cluster's steps done.
func (g *globals) stateDirFor(name string) string {
	if g.stateDir != "" {
		return g.stateDir
	}
	if g.sandbox {
		return g.sandboxStateDir(name)
	}
	return filepath.Join(filepath.Dir(g.config), ".ohmytalos", name)
}

// openState opens the cluster's state; the age identity is loaded only
// when a secret is first read or written, and created only to write one:
// a read-only command (kubeconfig, talosconfig, doctor, plan) never makes
// an identity, it says where it looked.
func (g *globals) openState(name string) (*state.Store, error) {
	st, err := state.Open(g.stateDirFor(name), name, nil)
	if err != nil {
		return nil, err
	}
	st.SetKeyLoader(func() (*state.Keyring, error) {
		return state.LoadKeyring(state.KeyFileCandidates(), state.DefaultNewKeyFile())
	})
	st.SetSecretObserver(g.observeSecret)
	st.SetKeyFinder(func() (*state.Keyring, error) {
		return state.FindKeyring(state.KeyFileCandidates())
	})
	return st, nil
}

// logger writes to --log-file (mode 0600, narrowed if it was wider), or
// nowhere.
func (g *globals) logger() (*slog.Logger, func(), error) {
	if g.logFile == "" {
		return slog.New(slog.NewTextHandler(io.Discard, nil)), func() {}, nil
	}
	f, err := privatefile.OpenAppend(g.logFile)
	if err != nil {
		return nil, nil, fmt.Errorf("open log file: %w", err)
	}
	return slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug})), func() { f.Close() }, nil
}
