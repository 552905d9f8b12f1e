package cloud

import (
	"context"
	"net/http"
	"net/url"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/safeurl"
)

// CheckEndpoint refuses an API endpoint the token would travel to in
// clear: http is accepted only to this machine (a sandbox, a local proxy).
func CheckEndpoint(explicit string) error {
	what := "HCLOUD_ENDPOINT"
	if explicit != "" {
		what = "the Hetzner API endpoint"
	}
	_, err := safeurl.Check(what, Endpoint(explicit))
	return err
}

// SandboxHeader is the response header by which the ohmytalos sandbox
// (internal/sandbox: every answer of `sandbox serve` and of the
// in-process sandbox carries it) tells itself apart from Hetzner. Hetzner
// never sends it, nor does a local proxy in front of Hetzner.
const SandboxHeader = "Ohmytalos-Sandbox"

// IsSandbox reports whether endpoint is the ohmytalos sandbox's Hetzner
// API: it must be on this machine and answer with SandboxHeader. Only a
// loopback endpoint is asked, within a second, so a run against Hetzner
// pays nothing and a variable left in the environment decides nothing.
func IsSandbox(ctx context.Context, endpoint string) bool {
	u, err := safeurl.Check("endpoint", endpoint)
	if err != nil || !safeurl.IsLoopbackHost(u.Hostname()) {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	// Ask the host's root, outside the Hetzner API's paths: the probe is no
	// Hetzner operation, so it must not be sent as one (the API description
	// test holds every request under the endpoint to hcloud-openapi).
	root := url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/"}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, root.String(), nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.Header.Get(SandboxHeader) == "1"
}
