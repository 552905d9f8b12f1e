package clients

import (
	"context"

	"github.com/ohmytalos/ohmytalos/internal/charts"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/releases"
)

// Releases returns a Helm releases client for the cluster from the
// kubeconfig bootstrap stored.
func (c *Set) Releases(_ context.Context, env *engine.Env) (*releases.Client, error) {
	return fromKubeconfig(env, releases.New)
}

// Charts is the chart source: the user's chart cache, the chart mirror
// when one is set (its charts the sandbox's stand-ins when standIns,
// checked against the pinned digests otherwise), progress to progress
// (nil: none).
func (c *Set) Charts(standIns bool, progress func(string)) *charts.Source {
	return &charts.Source{CacheDir: c.ChartCache, Mirror: c.ChartMirror, StandIns: standIns, Use: c.ChartMirrorUse, Progress: progress}
}
