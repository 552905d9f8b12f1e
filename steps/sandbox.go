package steps

import (
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/sandbox"
	"github.com/ohmytalos/ohmytalos/internal/secrets"
)

// SandboxDeps wires the steps' clients to an in-process sandbox. The
// sandbox token stands in for HCLOUD_TOKEN inside the resolver only; the
// process environment is left alone.
func SandboxDeps(sb *sandbox.Sandbox, log *slog.Logger, version string) *Deps {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Deps{
		Log: log, Version: version, Sandbox: true, Meter: cloud.NewMeter(nil),
		HCloudEndpoint: sb.HCloudURL, FactoryURL: sb.FactoryURL, SSHPort: sb.RescueSSHPort, IPEchoURL: sb.IPEchoURL,
		HTTP: &http.Client{Timeout: 5 * time.Minute}, PollInterval: 200 * time.Millisecond,
		Resolver: secrets.NewResolver(secrets.Options{Env: func(k string) (string, bool) {
			if k == "HCLOUD_TOKEN" {
				return sb.Token, true
			}
			return os.LookupEnv(k)
		}}),
	}
}
