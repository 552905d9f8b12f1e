package doctor

import (
	"context"
	"errors"
	"testing"
	"time"
)

// cronKube is a KubeSource that also reads CronJobs.
type cronKube struct {
	fakeKube
	jobs map[string]*CronJobStatus // "ns/name"
	err  error
}

func (c *cronKube) CronJob(_ context.Context, ns, name string) (*CronJobStatus, error) {
	return c.jobs[ns+"/"+name], c.err
}

func TestEtcdBackupAge(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	sixHourly := &ScheduledBackup{Namespace: "kube-system", CronJob: "talos-backup", Schedule: "0 */6 * * *", Interval: 6 * time.Hour}
	hourly := &ScheduledBackup{Namespace: "kube-system", CronJob: "talos-backup", Schedule: "@hourly", Interval: time.Hour}
	job := func(ago time.Duration) map[string]*CronJobStatus {
		st := &CronJobStatus{Schedule: "0 */6 * * *", LastScheduled: now.Add(-time.Hour)}
		if ago >= 0 {
			st.LastSuccessful = now.Add(-ago)
		}
		return map[string]*CronJobStatus{"kube-system/talos-backup": st}
	}
	cases := []struct {
		name      string
		backup    *ScheduledBackup
		kube      KubeSource
		onDemand  time.Duration // < 0: never
		want      Status
		fragments []string
	}{
		{"no backup at all", nil, nil, -1, StatusWarn, []string{"no scheduled backup", "ohmytalos etcd snapshot --out"}},
		{"no schedule, recent on-demand snapshot", nil, nil, 3 * time.Hour, StatusPass, []string{"last on-demand snapshot (ohmytalos etcd snapshot) 3h0m0s ago", "no scheduled backup"}},
		{"no schedule, old on-demand snapshot", nil, nil, 72 * time.Hour, StatusWarn, []string{"72h0m0s ago", "in the last 48h"}},
		{"recent scheduled backup", sixHourly, &cronKube{jobs: job(2 * time.Hour)}, -1, StatusPass, []string{"last successful scheduled backup 2h0m0s ago", `runs "0 */6 * * *"`}},
		{"two intervals missed", sixHourly, &cronKube{jobs: job(13 * time.Hour)}, -1, StatusWarn, []string{"older than 2 intervals (12h0m0s)"}},
		{"stopped", sixHourly, &cronKube{jobs: job(49 * time.Hour)}, -1, StatusFail, []string{"older than 48h0m0s", "backup has stopped", "kubectl -n kube-system logs"}},
		{"hourly schedule stalls for 3h: warn, fail waits for 48h", hourly, &cronKube{jobs: job(3 * time.Hour)}, -1, StatusWarn, []string{"2 intervals (2h0m0s)"}},
		{"never succeeded", sixHourly, &cronKube{jobs: job(-1)}, -1, StatusWarn, []string{"never succeeded", "create job --from=cronjob/talos-backup"}},
		{"CronJob missing", sixHourly, &cronKube{jobs: nil}, -1, StatusFail, []string{"does not exist", "ohmytalos apply"}},
		{"suspended", sixHourly, &cronKube{jobs: map[string]*CronJobStatus{"kube-system/talos-backup": {Suspended: true}}}, -1, StatusWarn, []string{"suspended", `"suspend":false`}},
		{"Kubernetes API error", sixHourly, &cronKube{err: errors.New("connection refused")}, -1, StatusError, []string{"CronJob kube-system/talos-backup", "connection refused"}},
		{"no Kubernetes API", sixHourly, nil, -1, StatusWarn, []string{"cannot be checked"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env, _ := healthyCluster()
			env.Now = func() time.Time { return now }
			env.Backup, env.Kube = tc.backup, tc.kube
			if tc.onDemand >= 0 {
				env.LastSnapshot = now.Add(-tc.onDemand)
			}
			expect(t, checkEtcd(context.Background(), env), tc.want, append(tc.fragments, "members as seen from cp-1")...)
		})
	}
}
