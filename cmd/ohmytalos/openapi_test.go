package main

import (
	"errors"
	"net/http"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/openapicheck"
	"github.com/ohmytalos/ohmytalos/internal/sandbox"
)

// TestHetznerExchangesFollowTheAPIDescription records every request sent
// to the sandbox's Hetzner fake, and every answer, through a whole apply,
// plan, doctor and destroy of the seed cluster (the product's own requests
// and those of the simulated in-cluster clients: cloud controller, CSI
// driver, Talos' VIP), and checks each exchange against Hetzner's
// published API description (hcloud-openapi, OpenAPI 3.0.3): the operation
// exists, the status is documented, and both bodies have the required
// fields, types and nullability it gives.
func TestHetznerExchangesFollowTheAPIDescription(t *testing.T) {
	descr, ok := openapicheck.LocateHCloud()
	if !ok {
		t.Skipf("Hetzner's API description %s is absent (shared/data beside the repository holds it): nothing to check against", descr)
	}
	checker, err := openapicheck.LoadHCloudFile(descr)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range openapicheck.HCloudAmendments {
		t.Logf("amended: %s", a)
	}
	start := time.Now()
	_, cfg := seedConfig(t)
	var rec *openapicheck.Recorder
	standaloneSandbox(t, sandbox.Options{WrapHCloud: func(h http.Handler) http.Handler {
		rec = openapicheck.NewRecorder(h)
		return rec
	}})
	runVerbs(t, rec, cfg)

	exchanges := rec.Exchanges()
	var all []openapicheck.Violation
	ops, byClient := map[string]bool{}, map[string]int{}
	for _, ex := range exchanges {
		if op := checker.Operation(ex.Method, ex.Path); op != "" {
			ops[op] = true
		}
		byClient[client(ex.RequestHeader.Get("User-Agent"))]++
		all = append(all, checker.Check(ex)...)
	}
	vs := openapicheck.Dedupe(all)
	t.Logf("%d exchanges checked (by client: %v), %d distinct operations, %d violations (%d distinct) in %s",
		len(exchanges), byClient, len(ops), len(all), len(vs), time.Since(start).Round(time.Millisecond))
	if byClient["ohmytalos"] == 0 {
		t.Error("no request of the product was recorded")
	}
	if len(vs) > 0 {
		lines := make([]string, len(vs))
		for i, v := range vs {
			lines[i] = v.String()
		}
		sort.Strings(lines)
		t.Errorf("%d distinct violations of %s:\n%s", len(vs), filepath.Base(descr), strings.Join(lines, "\n"))
	}
}

// runVerbs runs apply, plan, doctor and destroy of cfg in turn, each of
// which must reach the Hetzner fake.
func runVerbs(t *testing.T, rec *openapicheck.Recorder, cfg string) {
	t.Helper()
	for _, args := range [][]string{
		{"apply", "--config", cfg},
		{"plan", "--config", cfg},
		{"doctor", "--config", cfg},
		{"destroy", "--config", cfg, "--yes"},
	} {
		before := len(rec.Exchanges())
		out, err := run(t, args...)
		var ee *exitError
		// doctor exits 1 when a check fails; the exchanges are what count here.
		if err != nil && !(args[0] == "doctor" && errors.As(err, &ee)) {
			t.Fatalf("%s: %v\n%s", args[0], err, out)
		}
		n := len(rec.Exchanges()) - before
		t.Logf("%s: %d exchanges (exit: %v)", args[0], n, err)
		if n == 0 {
			t.Errorf("%s sent no request to the Hetzner fake", args[0])
		}
	}
}

// client is the application a User-Agent names first ("ohmytalos/dev
// hcloud-go/2.52.0" is ohmytalos).
func client(ua string) string {
	first, _, _ := strings.Cut(ua, " ")
	name, _, _ := strings.Cut(first, "/")
	return name
}
