package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/spf13/cobra"

	"github.com/ohmytalos/ohmytalos/internal/doctor"
	"github.com/ohmytalos/ohmytalos/steps"
	"github.com/ohmytalos/ohmytalos/ui/doctorui"
	"github.com/ohmytalos/ohmytalos/ui/theme"
)

func newDoctorCmd(g *globals) *cobra.Command {
	var o steps.DoctorOptions
	var checks []string
	var asJSON bool
	var in doctorInputs
	c := &cobra.Command{
		Use:   "doctor",
		Short: "Diagnose the failures no component reports (VIP, load balancer targets, IPv6, Cilium, SOPS, ...)",
		Long: `doctor runs checks against the live cluster, the Hetzner project, DNS and your
GitOps repository, concurrently, each with its own timeout. For every problem
it says what is wrong, the evidence, why it happens and the fix. Checks whose
source is missing (no kubeconfig yet, no --repo) skip and say why.

Without a spec (no ohmytalos.yaml here and no --config), it checks the
cluster the environment and flags point at: Kubernetes from --kubeconfig,
$KUBECONFIG or ~/.kube/config, Hetzner from HCLOUD_TOKEN with --cluster; the
checks that compare the nodes with the spec skip and say so.

Exit code: 0 when nothing fails, 1 when a check fails, 2 when the doctor
itself could not run.

Checks: ` + strings.Join(checkIDs(), ", "),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var ids []string
			for _, c := range checks {
				ids = append(ids, strings.Split(c, ",")...)
			}
			if err := knownChecks(ids); err != nil {
				return &exitError{code: 2, err: err}
			}
			src, err := g.doctorSource(cmd, o, in)
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			defer src.close()
			return runDoctor(cmd, g, src, ids, asJSON)
		},
	}
	f := c.Flags()
	f.StringSliceVar(&checks, "check", nil, "run only these checks (comma-separated IDs)")
	f.BoolVar(&asJSON, "json", false, "print one JSON document: schema_version, summary, exit_code and checks (id, title, status, evidence, explanation, fix); see docs/json.md")
	f.StringSliceVar(&o.Domains, "domain", nil, "a public domain of the cluster to check (repeatable; adds to the spec's domains)")
	f.StringVar(&o.Resolver, "resolver", "", "DNS server to ask, HOST:PORT (default: the system resolver)")
	f.StringVar(&o.RepoDir, "repo", "", "your GitOps repository (helmfile, SOPS and Cilium values checks)")
	f.StringVar(&o.Owner, "txt-owner-id", "", "the txtOwnerId your external-dns uses")
	f.StringVar(&in.kubeconfig, "kubeconfig", "", "without a spec: the kubeconfig to check (default: $KUBECONFIG, else ~/.kube/config)")
	f.StringVar(&in.context, "context", "", "without a spec: the kubeconfig context to use (default: its current-context)")
	f.StringVar(&in.talosconfig, "talosconfig", "", "without a spec: the talosconfig (default: $TALOSCONFIG, else ~/.talos/config)")
	f.StringVar(&in.cluster, "cluster", "", "without a spec: the cluster name its Hetzner resources are labelled with (ohmytalos.io/cluster); the Hetzner token comes from HCLOUD_TOKEN")
	return c
}

// runDoctor runs the checks of ids (all when empty) on src: the
// full-screen view on a terminal, else the plain report or JSON.
func runDoctor(cmd *cobra.Command, g *globals, src *doctorSource, ids []string, asJSON bool) error {
	out := cmd.OutOrStdout()
	run := redactedRun(src.env, src.redact)
	notes := make([]string, len(src.notes))
	for i, n := range src.notes {
		notes[i] = src.redact(n)
	}
	if !asJSON && isTerminal(os.Stdin) && isTerminal(out) {
		// Settle colours before the program reads the terminal.
		r := lipgloss.NewRenderer(out)
		theme.Prepare(r, g.noColor, theme.QueryTimeout)
		m := doctorui.New(run, doctor.Checks(), doctorui.Options{Sandbox: src.sandbox, Notes: notes, NoColor: g.noColor, Renderer: r, Only: ids})
		final, err := tea.NewProgram(m, tea.WithAltScreen(), tea.WithContext(cmd.Context())).Run()
		if err != nil {
			return &exitError{code: 2, err: err}
		}
		if code := doctor.ExitCode(final.(*doctorui.Model).Results()); code != 0 {
			return &exitError{code: code}
		}
		return nil
	}
	if !asJSON {
		if src.sandbox {
			fmt.Fprintln(out, "SANDBOX: checking the sandboxed cluster; nothing here exists on Hetzner")
		}
		for _, n := range notes {
			fmt.Fprintln(cmd.ErrOrStderr(), "note: "+n)
		}
	}
	results := run(cmd.Context(), ids, nil)
	var err error
	if asJSON {
		err = doctor.WriteJSON(out, results, doctor.JSONOptions{Sandbox: src.sandbox, Notes: notes})
	} else {
		err = doctor.WriteText(out, results)
	}
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	if code := doctor.ExitCode(results); code != 0 {
		return &exitError{code: code}
	}
	return nil
}

func checkIDs() []string {
	var ids []string
	for _, c := range doctor.Checks() {
		ids = append(ids, c.ID)
	}
	return ids
}

func knownChecks(ids []string) error {
	known := map[string]bool{}
	for _, id := range checkIDs() {
		known[id] = true
	}
	for _, id := range ids {
		if !known[id] {
			return fmt.Errorf("--check %s: no such check; the checks are %s", id, strings.Join(checkIDs(), ", "))
		}
	}
	return nil
}

// redactResult scrubs secret values from a result's text.
func redactResult(r doctor.Result, redact func(string) string) doctor.Result {
	r.Explanation, r.Fix = redact(r.Explanation), redact(r.Fix)
	ev := make([]string, len(r.Evidence))
	for i, e := range r.Evidence {
		ev[i] = redact(e)
	}
	r.Evidence = ev
	return r
}

// redactedRun runs the checks on env and scrubs secret values from every
// result, streamed or returned.
func redactedRun(env *doctor.Env, redact func(string) string) doctorui.RunFunc {
	return func(ctx context.Context, ids []string, report func(doctor.Result)) []doctor.Result {
		rs := doctor.Run(ctx, env, ids, func(r doctor.Result) {
			if report != nil {
				report(redactResult(r, redact))
			}
		})
		for i := range rs {
			rs[i] = redactResult(rs[i], redact)
		}
		return rs
	}
}
