package sandbox

import (
	"context"
	"slices"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/myip"
)

// The sandbox's echo service answers the caller's loopback address, the one
// its fake firewalls see, and Env exports its URL.
func TestSandboxIPEcho(t *testing.T) {
	sb, err := Start(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	if !slices.Contains(sb.Env(), myip.URLEnv+"="+sb.IPEchoURL) {
		t.Errorf("Env() %v lacks %s", sb.Env(), myip.URLEnv)
	}
	got, err := myip.Detect(context.Background(), nil, []string{sb.IPEchoURL})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"127.0.0.1/32"}; !slices.Equal(got.Sources(), want) {
		t.Errorf("sources = %v, want %v", got.Sources(), want)
	}
}
