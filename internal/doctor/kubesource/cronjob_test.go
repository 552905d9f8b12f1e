package kubesource

import (
	"context"
	"testing"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/doctor"
)

func TestSourceReadsCronJobs(t *testing.T) {
	src := sourceFor(t, map[string]any{
		"/apis/batch/v1/namespaces/kube-system/cronjobs/talos-backup": map[string]any{
			"spec":   map[string]any{"schedule": "0 */6 * * *", "suspend": false},
			"status": map[string]any{"lastScheduleTime": "2026-11-29T06:00:00Z", "lastSuccessfulTime": "2026-11-29T06:00:41Z"},
		},
		"/apis/batch/v1/namespaces/kube-system/cronjobs/never-ran": map[string]any{"spec": map[string]any{"schedule": "@daily", "suspend": true}},
	})
	var _ doctor.CronJobSource = src
	ctx := context.Background()
	cj, err := src.CronJob(ctx, "kube-system", "talos-backup")
	want := time.Date(2026, 11, 29, 6, 0, 41, 0, time.UTC)
	if err != nil || cj == nil || cj.Schedule != "0 */6 * * *" || cj.Suspended || !cj.LastSuccessful.Equal(want) || cj.LastScheduled.IsZero() {
		t.Errorf("talos-backup = %+v, %v", cj, err)
	}
	cj, err = src.CronJob(ctx, "kube-system", "never-ran")
	if err != nil || cj == nil || !cj.Suspended || !cj.LastSuccessful.IsZero() {
		t.Errorf("never-ran = %+v, %v", cj, err)
	}
	cj, err = src.CronJob(ctx, "kube-system", "missing")
	if err != nil || cj != nil {
		t.Errorf("missing = %+v, %v", cj, err)
	}
}
