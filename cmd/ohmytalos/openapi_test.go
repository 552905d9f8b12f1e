package main

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/openapicheck"
	"github.com/ohmytalos/ohmytalos/internal/sandbox"
)

// TestHetznerExchangesFollowTheAPIDescription records every request the
// product sends to the sandbox's Hetzner fake, and every answer, through a
// whole apply, plan, doctor and destroy of the seed cluster, and checks
// each exchange against Hetzner's published API description (hcloud-openapi,
// OpenAPI 3.0.3): the operation exists, the status is documented, and both
// bodies have the required fields, types and nullability it gives.
func TestHetznerExchangesFollowTheAPIDescription(t *testing.T) {
	descr, ok := openapicheck.LocateHCloud()
	if !ok {
		t.Skipf("Hetzner's API description %s is absent (shared/data beside the repository holds it): nothing to check against", descr)
	}
	checker, err := openapicheck.LoadHCloudFile(descr)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	dir := seedDir(t)
	cfg := filepath.Join(dir, "ohmytalos.yaml")
	sb, err := sandbox.Start(context.Background(), sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	rec := openapicheck.NewRecorder(sb.HCloud)
	api := httptest.NewServer(http.StripPrefix("/v1", rec))
	defer api.Close()
	for _, kv := range sb.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	t.Setenv("HCLOUD_ENDPOINT", api.URL+"/v1")

	verbs := [][]string{
		{"apply", "--config", cfg},
		{"plan", "--config", cfg},
		{"doctor", "--config", cfg},
		{"destroy", "--config", cfg, "--yes"},
	}
	for _, args := range verbs {
		before := len(rec.Exchanges())
		out, err := run(t, args...)
		var ee *exitError
		// doctor exits 1 when a check fails; the exchanges are what count here.
		if err != nil && !(args[0] == "doctor" && errors.As(err, &ee)) {
			t.Fatalf("%s: %v\n%s", args[0], err, out)
		}
		n := len(rec.Exchanges()) - before
		t.Logf("%s: %d exchanges (%v)", args[0], n, err)
		if n == 0 {
			t.Errorf("%s sent no request to the Hetzner fake through the recorder", args[0])
		}
	}

	exchanges := rec.Exchanges()
	var all []openapicheck.Violation
	ops := map[string]bool{}
	for _, ex := range exchanges {
		if op := checker.Operation(ex.Method, ex.Path); op != "" {
			ops[op] = true
		}
		all = append(all, checker.Check(ex)...)
	}
	vs := openapicheck.Dedupe(all)
	for _, a := range openapicheck.HCloudAmendments {
		t.Logf("amended: %s", a)
	}
	t.Logf("%d exchanges checked, %d distinct operations, %d violations (%d distinct) in %s",
		len(exchanges), len(ops), len(all), len(vs), time.Since(start).Round(time.Millisecond))
	if len(vs) > 0 {
		lines := make([]string, len(vs))
		for i, v := range vs {
			lines[i] = v.String()
		}
		sort.Strings(lines)
		t.Errorf("%d distinct violations of %s:\n%s", len(vs), filepath.Base(descr), strings.Join(lines, "\n"))
	}
}
