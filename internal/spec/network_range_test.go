package spec

import (
	"strings"
	"testing"
)

// Hetzner refuses a Network outside RFC1918 (the sandbox's fake answers
// invalid_input); the spec reports it on network.cidr before anything else.
func TestSharedAddressSpaceNetworkIsASpecProblem(t *testing.T) {
	_, err := Parse([]byte("name: d\nnetwork: {cidr: 100.64.0.0/10}\n"))
	ps, ok := err.(Problems)
	if !ok || len(ps) == 0 {
		t.Fatalf("err = %v, want Problems", err)
	}
	if ps[0].Field != "network.cidr" || !strings.Contains(ps[0].Reason, "RFC1918") || ps[0].Fix == "" {
		t.Fatalf("first problem = %+v, want network.cidr naming RFC1918 with a fix", ps[0])
	}
}
