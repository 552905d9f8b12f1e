package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// TestApplyRefusesALockoutAndFailsFastWhenAllowed applies the seed cluster
// against a standalone sandbox, then sets firewall.allow to a range that
// excludes this machine (the sandbox's IP echo reports loopback, and its
// firewall drops connections by source as Hetzner's does). apply refuses,
// naming the address and the fix; with --allow-lockout it sets the firewall
// and then fails within the node timeout, naming the address, the port and
// the firewall, instead of waiting in silence.
func TestApplyRefusesALockoutAndFailsFastWhenAllowed(t *testing.T) {
	_, cfg := sandboxSeed(t)
	if out, err := run(t, "apply", "--config", cfg); err != nil {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	locked := mustRead(t, cfg) + "firewall:\n  allow: [203.0.113.7/32]\n"
	if err := os.WriteFile(cfg, []byte(locked), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runWithin(t, 2*time.Minute, "apply", "--yes", "--config", cfg)
	if err == nil {
		t.Fatalf("apply set a firewall that locks this machine out:\n%s", out)
	}
	mustContain(t, "refusal", err.Error(), "127.0.0.1", "does not admit your address", "add 127.0.0.1/32 to firewall.allow", "--allow-lockout")
	start := time.Now()
	out, err = runWithin(t, 2*time.Minute, "apply", "--yes", "--allow-lockout", "--node-timeout", "3s", "--config", cfg)
	took := time.Since(start)
	if err == nil {
		t.Fatalf("apply behind a lockout succeeded:\n%s", out)
	}
	t.Logf("apply --allow-lockout failed after %s: %v", took.Round(time.Millisecond), err)
	mustContain(t, "error", err.Error(), ":50000", "within 3s", "the firewall is why", "203.0.113.7/32", "127.0.0.1")
	if !strings.Contains(out, "waiting for the Talos API at") {
		t.Errorf("the wait reported no progress:\n%s", out)
	}
	if took > 60*time.Second {
		t.Errorf("apply took %s to fail with a 3s node timeout", took)
	}
}

// runWithin is run with a deadline: a wait that would hang ends the
// command, whose error then says so.
func runWithin(t *testing.T, d time.Duration, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetIn(strings.NewReader(""))
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	return out.String(), err
}
