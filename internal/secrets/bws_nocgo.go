//go:build !cgo

package secrets

import (
	"context"
	"fmt"
)

// Lookup implements Provider: without cgo the Bitwarden SDK cannot be linked.
func (p bwsProvider) Lookup(_ context.Context, ref Ref) (Value, error) {
	if _, err := p.bwsRequest(ref); err != nil {
		return Value{}, err
	}
	if _, _, err := bwsEndpoints(ref.ServerURL); err != nil {
		return Value{}, fmt.Errorf("secret %s: %w", ref.String(), err)
	}
	return Value{}, fmt.Errorf("secret %s: this ohmytalos was built without cgo; Bitwarden Secrets Manager needs a cgo build (CGO_ENABLED=1)", ref.String())
}
