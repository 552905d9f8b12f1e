package charts

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"

	"helm.sh/helm/v4/pkg/registry"
)

// fetchOCI pulls r from an OCI registry (oci://HOST/PATH, the chart at
// HOST/PATH/NAME:VERSION) with helm's registry client, which reads the
// operator's `helm registry login` credentials (and Docker's). The
// chart layer's digest is sha256 of the .tgz, as an HTTP index's digest
// is, so a pinned Ref.Digest means the same archive either way.
func (s *Source) fetchOCI(ctx context.Context, r Ref) (*Chart, error) {
	pinned, cache, c, err := s.fromCache(r, true, false)
	if err != nil || c != nil {
		return c, err
	}

	ref := ociRef(r)

	opts := []registry.ClientOption{registry.ClientOptHTTPClient(s.client())}
	if loopback(ref) {
		// A registry on this machine (a test's, or a local mirror) speaks
		// plain HTTP, as `helm pull --plain-http` allows.
		opts = append(opts, registry.ClientOptPlainHTTP())
	}

	rc, err := registry.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("helm registry client: %w", err)
	}

	s.progress("pulling chart " + ref)

	res, err := pull(ctx, rc, ref)
	if err != nil {
		return nil, &reason{
			what: fmt.Sprintf("OCI chart %s cannot be pulled (%v)", ref, err),
			fix:  "check the network, the registry's credentials (`helm registry login`) and CHART.name/version, or set CHART.repository to a reachable mirror, or CHART.path to a local .tgz",
			err:  err,
		}
	}

	data := res.Chart.Data

	got := digestOf(data)
	if res.Chart.Digest != "" && res.Chart.Digest != got {
		return nil, &reason{what: fmt.Sprintf("digest mismatch: the registry's chart layer says %s, its content is %s", res.Chart.Digest, got), fix: "the registry serves a corrupt chart; retry later, or set CHART.path"}
	}

	if pinned != "" && got != pinned {
		return nil, &reason{
			what: fmt.Sprintf("digest mismatch: pinned %s, the registry serves %s", pinned, got),
			fix:  "if the chart was republished upstream, check it and set CHART.digest to the new digest; otherwise the registry (or a proxy) serves a different chart",
		}
	}

	if err := writeCache(cache, got, data); err != nil {
		return nil, err
	}

	return load(r, got, data)
}

// pull runs helm's Pull (which takes no context) so that ctx still
// bounds the wait.
func pull(ctx context.Context, rc *registry.Client, ref string) (*registry.PullResult, error) {
	type result struct {
		res *registry.PullResult
		err error
	}

	ch := make(chan result, 1)
	go func() {
		res, err := rc.Pull(ref)
		ch <- result{res, err}
	}()

	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case r := <-ch:
		return r.res, r.err
	}
}

// ociRef is HOST/PATH/NAME:VERSION; "+" in a version becomes "_", as helm
// tags it (OCI tags allow no "+": pkg/registry/tag.go).
func ociRef(r Ref) string {
	base := strings.TrimSuffix(strings.TrimPrefix(r.Repository, "oci://"), "/")

	return base + "/" + r.Name + ":" + strings.ReplaceAll(r.Version, "+", "_")
}

// loopback says whether ref's host is this machine.
func loopback(ref string) bool {
	u, err := url.Parse("oci://" + ref)
	if err != nil {
		return false
	}

	h := u.Hostname()
	if h == "localhost" {
		return true
	}

	ip := net.ParseIP(h)

	return ip != nil && ip.IsLoopback()
}
