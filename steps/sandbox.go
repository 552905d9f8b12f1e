package steps

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/clients"
	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/secrets"
)

// SandboxEndpoints is where a sandbox's fakes listen and the token its
// Hetzner fake accepts: plain values, handed over by cmd (or a test) so
// that no provisioning package imports the sandbox.
type SandboxEndpoints struct {
	HCloudURL, FactoryURL, IPEchoURL, Token string
	RescueSSHPort                           int
	// ChartsURL is the sandbox's chart mirror (clients.Set.ChartMirror).
	ChartsURL string
	// KubeReady waits for the sandbox's Kubernetes build
	// (clients.Set.KubeReady); nil waits for nothing.
	KubeReady func(ctx context.Context, progress func(message string, fraction float64)) error
}

// SandboxDeps wires the steps' clients to a sandbox's endpoints. The
// sandbox token stands in for HCLOUD_TOKEN inside the resolver only; the
// process environment is left alone.
func SandboxDeps(sb SandboxEndpoints, log *slog.Logger, version string) *Deps {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Deps{
		Set: &clients.Set{
			Log: log, Version: version, Meter: cloud.NewMeter(nil),
			HCloudEndpoint: sb.HCloudURL, FactoryURL: sb.FactoryURL, IPEchoURL: sb.IPEchoURL, ChartMirror: sb.ChartsURL,
			KubeReady: sb.KubeReady,
			HTTP:      &http.Client{Timeout: 5 * time.Minute}, PollInterval: 200 * time.Millisecond,
			Resolver: secrets.NewResolver(secrets.Options{Env: func(k string) (string, bool) {
				if k == "HCLOUD_TOKEN" {
					return sb.Token, true
				}
				return os.LookupEnv(k)
			}}),
		},
		Sandbox: true, SSHPort: sb.RescueSSHPort,
	}
}
