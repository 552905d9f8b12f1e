package releases

import (
	"context"
	"fmt"
	"time"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/kube"

	"github.com/ohmytalos/ohmytalos/internal/charts"
)

// Spec is a release as ohmytalos wants it.
type Spec struct {
	Name, Namespace string
	Chart           *charts.Chart
	// Values are the merged values (charts.Merge): what `helm get values`
	// shows afterwards.
	Values map[string]any
	// Timeout bounds the wait for the release's resources to be ready;
	// 0 is DefaultTimeout.
	Timeout time.Duration
	// InstallNoWait installs (never upgrades) without waiting for the
	// resources to be ready, as `helm install` without --wait: the caller
	// waits for them afterwards. On a new cluster the add-ons' workloads
	// wait for each other (Hubble relay needs the cloud controller's
	// initialised nodes, the cloud controller needs the CNI's Ready
	// nodes), so a wait per release in install order would never end.
	// Upgrades always wait, and roll back on failure.
	InstallNoWait bool
}

// Result is what Ensure did.
type Result struct {
	Change   Change
	Revision int // the release's revision afterwards
}

// Ensure makes the release what s says: installs it when absent,
// upgrades it when the chart version or the values differ (or its last
// revision did not deploy), reuses it otherwise, and waits for its
// resources to be ready. A failed upgrade is rolled back, so the previous
// revision keeps serving.
func (c *Client) Ensure(ctx context.Context, s Spec) (Result, error) {
	if s.Chart == nil || s.Chart.Chart == nil {
		return Result{}, fmt.Errorf("release %s in %s: no chart", s.Name, s.Namespace)
	}

	if s.Timeout == 0 {
		s.Timeout = DefaultTimeout
	}

	cfg, _, err := c.action(s.Namespace)
	if err != nil {
		return Result{}, err
	}

	cur, err := get(cfg, s.Name, s.Namespace)
	if err != nil {
		return Result{}, err
	}

	if cur.Found && isPending(cur.Status) {
		return Result{}, fmt.Errorf("helm release %s in %s: revision %d is %s (an earlier run stopped mid-way, or another client is at work): when no other helm runs, `helm rollback %s -n %s` (or `helm uninstall` when it never deployed), then apply again",
			s.Name, s.Namespace, cur.Revision, cur.Status, s.Name, s.Namespace)
	}

	ch := Diff(cur, s.Chart.Chart.Metadata.Version, s.Values)

	switch ch.Action {
	case ActionInstall:
		rev, err := c.install(ctx, cfg, s)
		return Result{Change: ch, Revision: rev}, err
	case ActionUpgrade:
		rev, err := c.upgrade(ctx, cfg, s, cur)
		return Result{Change: ch, Revision: rev}, err
	}

	return Result{Change: ch, Revision: cur.Revision}, nil
}

func isPending(status string) bool {
	switch status {
	case "pending-install", "pending-upgrade", "pending-rollback", "uninstalling":
		return true
	}

	return false
}

// install is `helm install --create-namespace --wait --timeout T`. Objects
// that exist already are adopted when they carry this release's
// ownership metadata (Adopt), as helm's install allows
// (pkg/action/validate.go existingResourceConflict).
func (c *Client) install(ctx context.Context, cfg *action.Configuration, s Spec) (int, error) {
	in := action.NewInstall(cfg)
	in.ReleaseName = s.Name
	in.Namespace = s.Namespace
	in.CreateNamespace = true
	in.ServerSideApply = true // the CLI's default (pkg/cmd/install.go)
	in.ForceConflicts = true  // take over fields ohmytalos's own server-side apply owned
	in.WaitStrategy = kube.StatusWatcherStrategy
	in.WaitForJobs = true
	if s.InstallNoWait {
		in.WaitStrategy, in.WaitForJobs = kube.HookOnlyStrategy, false
	}
	in.Timeout = s.Timeout

	r, err := in.RunWithContext(ctx, s.Chart.Chart, s.Values)
	if err != nil {
		return 0, fmt.Errorf("helm install %s %s in %s: %w: fix the cause, then apply again (it upgrades the failed release)",
			s.Name, s.Chart.Chart.Metadata.Version, s.Namespace, err)
	}

	rel, err := v1(r)
	if err != nil {
		return 0, err
	}

	return rel.Version, nil
}

// upgrade is `helm upgrade --reset-values --rollback-on-failure --wait`:
// a failure rolls back to the last deployed revision.
func (c *Client) upgrade(ctx context.Context, cfg *action.Configuration, s Spec, cur Current) (int, error) {
	up := action.NewUpgrade(cfg)
	up.Namespace = s.Namespace
	up.ResetValues = true // the values are exactly s.Values, never the old ones merged in
	up.ServerSideApply = "true"
	up.ForceConflicts = true
	up.WaitStrategy = kube.StatusWatcherStrategy
	up.WaitForJobs = true
	up.Timeout = s.Timeout
	up.RollbackOnFailure = true
	up.MaxHistory = maxHistory

	r, err := up.RunWithContext(ctx, s.Name, s.Chart.Chart, s.Values)
	if err != nil {
		return 0, c.upgradeFailed(cfg, s, cur, err)
	}

	rel, err := v1(r)
	if err != nil {
		return 0, err
	}

	return rel.Version, nil
}

// upgradeFailed says what serves now, and how to roll back by hand.
func (c *Client) upgradeFailed(cfg *action.Configuration, s Spec, before Current, err error) error {
	now, gerr := get(cfg, s.Name, s.Namespace)
	if gerr == nil && now.Status == "deployed" && now.Revision > before.Revision {
		return fmt.Errorf("helm upgrade %s to chart %s in %s failed (%w); it was rolled back, and revision %d (chart %s, as revision %d) serves: fix the values or chart, then apply again (by hand: `helm rollback %s %d -n %s`)",
			s.Name, s.Chart.Chart.Metadata.Version, s.Namespace, err, now.Revision, before.ChartVersion, before.Revision, s.Name, before.Revision, s.Namespace)
	}

	return fmt.Errorf("helm upgrade %s to chart %s in %s failed (%w), and so did the rollback: roll back by hand with `helm rollback %s %d -n %s`",
		s.Name, s.Chart.Chart.Metadata.Version, s.Namespace, err, s.Name, before.Revision, s.Namespace)
}
