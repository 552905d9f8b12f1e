package sandbox

import (
	"context"
	"slices"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/myip"
)

// startExporting starts a sandbox with default options until the test
// ends, and checks that Env exports name as value(sandbox).
func startExporting(t *testing.T, name string, value func(*Sandbox) string) *Sandbox {
	t.Helper()
	sb, err := Start(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sb.Close() })
	if !slices.Contains(sb.Env(), name+"="+value(sb)) {
		t.Errorf("Env() %v lacks %s", sb.Env(), name)
	}
	return sb
}

// The sandbox's echo service answers the caller's loopback address, the one
// its fake firewalls see, and Env exports its URL.
func TestSandboxIPEcho(t *testing.T) {
	sb := startExporting(t, myip.URLEnv, func(sb *Sandbox) string { return sb.IPEchoURL })
	got, err := myip.Detect(context.Background(), nil, []string{sb.IPEchoURL})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"127.0.0.1/32"}; !slices.Equal(got.Sources(), want) {
		t.Errorf("sources = %v, want %v", got.Sources(), want)
	}
}
