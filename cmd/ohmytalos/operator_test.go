package main

import (
	"os"
	"strings"
	"testing"
)

// TestOperatorAddressFlag: with the IP echo unreachable, a firewall.allow
// that may exclude this machine stops apply at its pre-flight, naming the
// detection failure and both ways out; plan --operator-address checks the
// named address instead, and a malformed one is refused by the flag's
// name before anything runs.
func TestOperatorAddressFlag(t *testing.T) {
	seed, err := os.ReadFile("../../examples/seed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sb, cfg := externalSandbox(t, string(seed)+"firewall: {allow: [203.0.113.7/32], ipEchoURL: 'http://127.0.0.1:1/'}\n")

	_, err = run(t, "plan", "--operator-address", "my-laptop", "--config", cfg)
	if err == nil {
		t.Fatal("plan took a malformed --operator-address")
	}
	mustContain(t, "refusal", err.Error(), "--operator-address", `"my-laptop" is not an IP address or CIDR`, "203.0.113.7")

	out, err := run(t, "apply", "--plain", "--config", cfg)
	if err == nil {
		t.Fatalf("apply passed a firewall that may exclude this machine, its address unknown:\n%s", out)
	}
	mustContain(t, "apply's pre-flight", err.Error(), "nothing was created", "firewall.allow", "could not be detected", "http://127.0.0.1:1/",
		"--operator-address", "--allow-lockout")
	for kind, n := range sb.HCloud.Counts() {
		if n != 0 {
			t.Errorf("apply created %d %s before failing its pre-flight", n, kind)
		}
	}

	out, err = run(t, "plan", "--operator-address", "203.0.113.7", "--config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "error: firewall.allow") || strings.Contains(out, "could not be detected") {
		t.Errorf("plan --operator-address 203.0.113.7 with firewall.allow [203.0.113.7/32]:\n%s", out)
	}
	out, err = run(t, "plan", "--operator-address", "198.51.100.9", "--config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "plan", out, "error: firewall.allow", "does not admit your address [198.51.100.9]")
}
