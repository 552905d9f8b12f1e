package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/factory"
	"github.com/ohmytalos/ohmytalos/internal/myip"
	"github.com/ohmytalos/ohmytalos/internal/sandbox"
)

// externalSandbox starts a sandbox and points the CLI at it through the
// environment, as for a real project: what apply creates stays countable.
func externalSandbox(t *testing.T, specText string) (*sandbox.Sandbox, string) {
	t.Helper()
	_, cfg := seedConfig(t)
	if specText != "" {
		if err := os.WriteFile(cfg, []byte(specText), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sb, err := sandbox.Start(context.Background(), sandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	t.Setenv("HCLOUD_TOKEN", sb.Token)
	t.Setenv("HCLOUD_ENDPOINT", sb.HCloudURL)
	t.Setenv(myip.URLEnv, sb.IPEchoURL)
	t.Setenv(factory.URLEnv, sb.FactoryURL)
	return sb, cfg
}

// TestApplyStopsAtPreflight: a firewall that excludes this machine is a
// pre-flight error; apply refuses it before creating anything, and plan
// shows it (text and --json).
func TestApplyStopsAtPreflight(t *testing.T) {
	seed, err := os.ReadFile("../../examples/seed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sb, cfg := externalSandbox(t, string(seed)+"firewall: {allow: [203.0.113.7/32]}\n")
	out, err := run(t, "apply", "--config", cfg, "--plain")
	if err == nil || !strings.Contains(err.Error(), "pre-flight") || !strings.Contains(err.Error(), "firewall.allow") ||
		!strings.Contains(err.Error(), "nothing was created") {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	for kind, n := range sb.HCloud.Counts() {
		if n != 0 {
			t.Errorf("apply created %d %s before failing its pre-flight", n, kind)
		}
	}
	out, err = run(t, "plan", "--config", cfg)
	if err != nil || !strings.Contains(out, "pre-flight:") || !strings.Contains(out, "error: firewall.allow: the firewall will admit") {
		t.Errorf("plan: %v\n%s", err, out)
	}
	out, err = run(t, "plan", "--json", "--config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Preflight []struct{ Check, Severity, Field, Reason, Fix string } `json:"preflight"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range doc.Preflight {
		found = found || (f.Check == "reachability" && f.Severity == "error" && f.Field == "firewall.allow" && f.Fix != "")
	}
	if !found {
		t.Errorf("plan --json preflight = %+v", doc.Preflight)
	}
}

// TestPlanStopsOnASpentBudget: with every request answered 429, plan
// (its steps, pre-flight and prices) ends at once with the reason, and
// apply refuses before it creates anything.
func TestPlanStopsOnASpentBudget(t *testing.T) {
	sb, cfg := externalSandbox(t, "")
	sb.HCloud.InjectStatus("", "/", http.StatusTooManyRequests, 1000)
	start := time.Now()
	out, err := run(t, "plan", "--config", cfg)
	if err == nil || !strings.Contains(err.Error(), "rate_limit_exceeded") {
		t.Fatalf("plan: %v\n%s", err, out)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("plan took %s on a spent budget", took)
	}
	_, err = run(t, "apply", "--config", cfg, "--plain")
	if err == nil || !strings.Contains(err.Error(), "rate_limit_exceeded") {
		t.Fatalf("apply: %v", err)
	}
	if n := sb.HCloud.Counts()["servers"]; n != 0 {
		t.Errorf("%d servers created", n)
	}
}
