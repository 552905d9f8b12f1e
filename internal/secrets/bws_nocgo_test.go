//go:build !cgo

package secrets_test

import (
	"context"
	"strings"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/secrets"
)

func TestBWSWithoutCgo(t *testing.T) {
	t.Parallel()
	r := secrets.NewResolver(secrets.Options{Env: envMap(map[string]string{"BWS_ACCESS_TOKEN": fakeToken})})
	_, err := r.Lookup(context.Background(), secrets.Ref{Provider: "bws", Ref: secretID})
	if err == nil || !strings.Contains(err.Error(), "built without cgo") || !strings.Contains(err.Error(), "CGO_ENABLED=1") {
		t.Fatalf("err = %v, want the no-cgo message", err)
	}
}
