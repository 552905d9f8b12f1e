package factory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/safeurl"
)

// DefaultBaseURL is the public Image Factory.
const DefaultBaseURL = "https://factory.talos.dev"

// URLEnv names the environment variable that points ohmytalos at another
// Image Factory (a mirror, a self-hosted one, or the sandbox's). The caller
// reads it; this package only names it in its error messages.
const URLEnv = "OHMYTALOS_FACTORY_URL"

// maxBody caps what is read from a factory answer: the largest, the list of
// official extensions, is a few tens of KB.
const maxBody = 4 << 20

// Extension is one official system extension as the factory lists it for a
// Talos version (GET /version/V/extensions/official).
type Extension struct {
	// Name is the extension's name as used in a schematic, for example
	// "siderolabs/tailscale".
	Name string `json:"name"`
	// Ref is the image reference with its tag.
	Ref string `json:"ref"`
	// Digest is the image digest.
	Digest string `json:"digest"`
	// Author is the extension's author.
	Author string `json:"author,omitempty"`
	// Description says what the extension provides.
	Description string `json:"description,omitempty"`
}

// Client talks to an Image Factory over HTTP.
type Client struct {
	base *url.URL
	hc   *http.Client
}

// NewClient returns a client for the factory at baseURL (DefaultBaseURL when
// empty) using hc (a client with a 60 s timeout when nil). A baseURL that does
// not parse is kept as given and reported by the first request.
func NewClient(baseURL string, hc *http.Client) *Client {
	if baseURL == "" {
		baseURL = DefaultBaseURL
	}
	if hc == nil {
		hc = &http.Client{Timeout: 60 * time.Second}
	}
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || u.Scheme == "" || u.Host == "" {
		u = &url.URL{Opaque: baseURL} // rejected in do with a clear message
	}
	return &Client{base: u, hc: hc}
}

// BaseURL returns the factory's base URL, without a trailing slash.
func (c *Client) BaseURL() string {
	if c.base.Opaque != "" {
		return c.base.Opaque
	}
	return c.base.String()
}

// Register uploads the schematic (POST /schematics, canonical YAML body) and
// returns the ID the factory assigned. It fails when that ID differs from the
// one computed offline, since images would then be built from a different
// schematic than the one ohmytalos recorded.
func (c *Client) Register(ctx context.Context, s Schematic) (string, error) {
	want, err := s.ID()
	if err != nil {
		return "", err
	}
	body, err := s.Marshal()
	if err != nil {
		return "", err
	}
	var out struct {
		ID string `json:"id"`
	}
	if err := c.do(ctx, http.MethodPost, "/schematics", body, &out); err != nil {
		return "", fmt.Errorf("register schematic %s: %w", want, err)
	}
	if out.ID != want {
		return "", fmt.Errorf("register schematic: the image factory at %s answered ID %q but the schematic hashes to %s; "+
			"the factory uses a different schematic format than this ohmytalos: upgrade ohmytalos or point %s at a compatible factory",
			c.BaseURL(), out.ID, want, URLEnv)
	}
	return out.ID, nil
}

// Versions lists the Talos versions the factory can build (GET /versions),
// in the factory's order (oldest first on factory.talos.dev).
func (c *Client) Versions(ctx context.Context) ([]string, error) {
	var out []string
	if err := c.do(ctx, http.MethodGet, "/versions", nil, &out); err != nil {
		return nil, fmt.Errorf("list talos versions: %w", err)
	}
	return out, nil
}

// OfficialExtensions lists the official system extensions available for a
// Talos version (GET /version/V/extensions/official).
func (c *Client) OfficialExtensions(ctx context.Context, version string) ([]Extension, error) {
	if version == "" {
		return nil, errors.New("list official extensions: the talos version is empty; pass one such as v1.13.9")
	}
	var out []Extension
	p := "/version/" + url.PathEscape(version) + "/extensions/official"
	if err := c.do(ctx, http.MethodGet, p, nil, &out); err != nil {
		return nil, fmt.Errorf("list official extensions for talos %s: %w", version, err)
	}
	return out, nil
}

// do sends one request and decodes its JSON answer. Any 2xx is success, as
// in the factory's own client (image-factory pkg/client: 201 for a new
// schematic, 200 elsewhere); 400 means the factory rejected the schematic.
func (c *Client) do(ctx context.Context, method, path string, body []byte, out any) error {
	if c.base.Opaque != "" {
		return fmt.Errorf("image factory URL %q is not an absolute http(s) URL; set %s to one such as %s", c.base.Opaque, URLEnv, DefaultBaseURL)
	}
	// The factory's answers decide what the nodes boot: never in clear
	// from another machine.
	if _, err := safeurl.Check("image factory URL ("+URLEnv+")", c.base.String()); err != nil {
		return err
	}
	target := c.base.String() + path
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return fmt.Errorf("build request to %s: %w", target, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/yaml")
	}
	req.Header.Set("Accept", "application/json")

	resp, err := c.hc.Do(req)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return fmt.Errorf("request to %s: %w", target, ctxErr)
		}
		return fmt.Errorf("the image factory at %s is unreachable (%w); check the network, or set %s to a reachable Image Factory",
			c.BaseURL(), err, URLEnv)
	}
	defer resp.Body.Close() //nolint:errcheck // read-only body

	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return fmt.Errorf("read answer of %s %s: %w", method, target, err)
	}
	if resp.StatusCode == http.StatusBadRequest && method == http.MethodPost {
		return fmt.Errorf("the image factory at %s rejected the schematic as invalid: %s", c.BaseURL(), snippet(data))
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s answered %s: %s", method, target, resp.Status, snippet(data))
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("decode answer of %s %s: %w (is %s an Image Factory?)", method, target, err, c.BaseURL())
	}
	return nil
}

// snippet returns the start of an error body, on one line.
func snippet(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	if s == "" {
		return "(empty body)"
	}
	return s
}
