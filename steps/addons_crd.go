package steps

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/addons"
	"github.com/ohmytalos/ohmytalos/internal/kube"
)

// operatorCRDTimeout bounds the wait for a CRD an operator registers when
// it starts (Cilium's, by the cilium-operator): the operator's image pull
// and start on a fresh control plane.
const operatorCRDTimeout = 5 * time.Minute

// awaitKind waits until the API server serves k's kind: applying the
// object earlier fails with "no matches for kind". It fails after timeout
// with what to look at.
func awaitKind(ctx context.Context, c *kube.Client, k addons.OperatorKind, timeout, poll time.Duration) error {
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		ok, err := c.Served(wctx, k.APIVersion, k.Kind)
		if ok {
			return nil
		}
		// A request the wait's own bound cut short is the wait ending,
		// not an answer: it ends as the bound does below.
		if err != nil && !kube.IsRetryable(err) && wctx.Err() == nil {
			return fmt.Errorf("ask whether %s (%s) is served: %w", k.Kind, k.APIVersion, err)
		}
		if err != nil && wctx.Err() == nil {
			last = err
		}
		if werr := sleep(wctx, poll); werr != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("waiting for the %s CRD: %w", k.Kind, ctx.Err())
			}
			msg := fmt.Sprintf("%s (%s) is still not served after %s: %s registers its CRD when it starts; check that it runs (%s) and run apply again",
				k.Kind, k.APIVersion, timeout, k.Operator, k.Check)
			if last != nil {
				return fmt.Errorf("%s (last error: %w)", msg, last)
			}
			return errors.New(msg)
		}
	}
}
