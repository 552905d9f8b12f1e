package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ohmytalos/ohmytalos/internal/sandbox"
)

func newSandboxCmd(g *globals) *cobra.Command {
	c := &cobra.Command{
		Use:   "sandbox",
		Short: "Run the built-in fakes of Hetzner Cloud, Talos nodes and the Image Factory",
	}
	var addr string
	var latencyMS int
	var action, boot time.Duration
	var readOnly bool
	serve := &cobra.Command{
		Use:   "serve",
		Short: "Serve the sandbox standalone and print the environment clients need",
		Long: `serve starts the fakes and prints "export NAME=value" lines (HCLOUD_ENDPOINT,
HCLOUD_TOKEN, OHMYTALOS_FACTORY_URL, OHMYTALOS_BW_SERVE_URL, OHMYTALOS_BW_ITEM,
OHMYTALOS_CHART_MIRROR, ...) that a shell can eval:

  eval "$(ohmytalos sandbox serve --addr 127.0.0.1:8080 &)"   # or copy the lines

It keeps its state while clients come and go, so "ohmytalos apply" in
another shell can be killed and resumed against it, and any hcloud-go based
client (the hcloud CLI too) sees the same resources. Nothing it serves exists
on Hetzner. Stop it with Ctrl-C.

Each Talos cluster's Kubernetes API is served by a real kube-apiserver,
etcd, kube-controller-manager and kube-scheduler (v1.36.3), built with go
on first use into the user's cache (minutes, with progress on stderr) and
reused; see docs/sandbox.md.

It also serves a Vaultwarden vault as "bw serve" exposes it, holding one item
whose password is the sandbox token, so the bw secret step works without an
account (unset HCLOUD_TOKEN to see it is used):

  hcloudToken: {provider: bw, ref: $OHMYTALOS_BW_ITEM, serverURL: $OHMYTALOS_BW_SERVE_URL}

And it serves the Helm chart repositories the add-ons come from, holding
stand-in charts the project writes (the upstream names, versions and value
keys; not the upstream charts): https://HOST/PATH is mirrored at
$OHMYTALOS_CHART_MIRROR/HOST/PATH, e.g.

  helm repo add cilium "$OHMYTALOS_CHART_MIRROR/helm.cilium.io"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			log, closeLog, err := g.logger()
			if err != nil {
				return err
			}
			defer closeLog()
			o := sandboxDemoOptions(log)
			o.Addr, o.Latency, o.ReadOnly = addr, time.Duration(latencyMS)*time.Millisecond, readOnly
			if action > 0 {
				o.ActionDuration, o.Durations = action, nil
			}
			if boot >= 0 {
				o.BootDelay = boot
			}
			o.Progress = func(line string) { fmt.Fprintln(cmd.ErrOrStderr(), "# "+line) }
			sb, err := sandbox.Start(cmd.Context(), o)
			if err != nil {
				return err
			}
			defer sb.Close()
			// Clients of the exports get a Kubernetes API at once: the
			// build (progress on stderr) comes first.
			if _, err := sb.Kube.Wait(cmd.Context()); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			for _, kv := range sb.Env() {
				fmt.Fprintf(out, "export %s\n", kv)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "# ohmytalos SANDBOX serving fakes of Hetzner Cloud (%s), the Image Factory (%s), a Vaultwarden bw serve (%s) and Helm chart repositories with stand-in charts (%s); nothing here exists on Hetzner. Ctrl-C stops it.\n",
				sb.HCloudURL, sb.FactoryURL, sb.BWServeURL, sb.ChartsURL)
			<-cmd.Context().Done()
			return nil
		},
	}
	serve.Flags().StringVar(&addr, "addr", "127.0.0.1:0", "listen address (loopback)")
	serve.Flags().IntVar(&latencyMS, "latency", 0, "milliseconds of latency added to every Hetzner API request")
	serve.Flags().DurationVar(&action, "action-duration", 0, "how long every Hetzner action takes (default: a sped-up model of Hetzner)")
	serve.Flags().DurationVar(&boot, "boot-delay", -1, "how long a Talos node takes to boot (default 3s)")
	serve.Flags().BoolVar(&readOnly, "read-only", false, "make the printed token read-only (to see how ohmytalos reports it)")
	// Accepted from the days it chose between two API servers; the real
	// control plane is the only one now.
	serve.Flags().Bool("real-kubernetes", false, "serve each cluster's Kubernetes API from the real control plane (always so)")
	_ = serve.Flags().MarkDeprecated("real-kubernetes", "the sandbox always runs the real control plane; drop the flag")
	c.AddCommand(serve)
	return c
}
