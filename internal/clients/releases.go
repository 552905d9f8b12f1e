package clients

import (
	"context"
	"fmt"

	"github.com/ohmytalos/ohmytalos/internal/charts"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/releases"
)

// Releases returns a Helm releases client for the cluster from the
// kubeconfig bootstrap stored.
func (c *Set) Releases(_ context.Context, env *engine.Env) (*releases.Client, error) {
	kc, err := env.State.Secret(kubeconfigSecret)
	if err != nil {
		return nil, fmt.Errorf("no kubeconfig stored yet (%w): run the bootstrap step first", err)
	}
	rc, err := releases.New(kc)
	if err != nil {
		return nil, fmt.Errorf("stored kubeconfig %s: %w", env.State.SecretPath(kubeconfigSecret), err)
	}
	return rc, nil
}

// Charts is the chart source: the user's chart cache, the chart mirror
// when one is set, progress to progress (nil: none).
func (c *Set) Charts(progress func(string)) *charts.Source {
	return &charts.Source{CacheDir: c.ChartCache, Mirror: c.ChartMirror, Progress: progress}
}
