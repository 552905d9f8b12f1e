package doctor

import (
	"context"
	"fmt"
	"time"
)

// ScheduledBackup names the CronJob that backs etcd up (the backup add-on)
// and how often it should succeed.
type ScheduledBackup struct {
	// Namespace and CronJob name the backup CronJob.
	Namespace, CronJob string
	// Schedule is the cron schedule the spec asks for.
	Schedule string
	// Interval is the longest gap between two scheduled runs.
	Interval time.Duration
}

// CronJobStatus is what the doctor reads from a CronJob.
type CronJobStatus struct {
	// Schedule is spec.schedule as the cluster holds it.
	Schedule string
	// Suspended is spec.suspend.
	Suspended bool
	// LastScheduled is status.lastScheduleTime (zero = never).
	LastScheduled time.Time
	// LastSuccessful is status.lastSuccessfulTime (zero = never).
	LastSuccessful time.Time
}

// CronJobSource reads CronJobs; a KubeSource that implements it lets the
// etcd check report the age of the last scheduled backup.
type CronJobSource interface {
	// CronJob reads a CronJob; nil, nil when it does not exist.
	CronJob(ctx context.Context, namespace, name string) (*CronJobStatus, error)
}

// Backup age limits: a scheduled backup warns after BackupWarnIntervals
// missed intervals and fails after BackupFailIntervals, never sooner than
// BackupMinFailAge (a frequent schedule that stalls for an hour is not yet
// a failure).
const (
	BackupWarnIntervals = 2
	BackupFailIntervals = 4
	BackupMinFailAge    = 48 * time.Hour
	// OnDemandWarnAge is how old the last `ohmytalos etcd snapshot` may be
	// on a cluster with no scheduled backup before the check warns.
	OnDemandWarnAge = 48 * time.Hour
)

// backupResult judges the cluster's etcd backups once the membership is
// healthy: the scheduled backup's last success, or, without one, the last
// on-demand snapshot.
func backupResult(ctx context.Context, env *Env, evidence []string) Result {
	now := env.now()
	if !env.LastSnapshot.IsZero() {
		evidence = append(evidence, fmt.Sprintf("last on-demand snapshot (ohmytalos etcd snapshot) %s ago (%s)",
			now.Sub(env.LastSnapshot).Round(time.Minute), env.LastSnapshot.UTC().Format(time.RFC3339)))
	}
	if env.Backup == nil {
		return unscheduled(env, now, evidence)
	}
	b := env.Backup
	src, ok := env.Kube.(CronJobSource)
	if env.Kube == nil || !ok {
		return Result{Status: StatusWarn, Evidence: append(evidence, "the backup add-on is on, but the Kubernetes API is not available to read its CronJob"),
			Explanation: "the age of the last scheduled etcd backup cannot be checked without the Kubernetes API",
			Fix:         "run the doctor where the cluster's kubeconfig is stored (ohmytalos apply stores it)"}
	}
	cj, err := src.CronJob(ctx, b.Namespace, b.CronJob)
	if err != nil {
		r := sourceError(fmt.Sprintf("CronJob %s/%s", b.Namespace, b.CronJob), err)
		r.Evidence = evidence
		return r
	}
	ref := b.Namespace + "/" + b.CronJob
	if cj == nil {
		return Result{Status: StatusFail, Evidence: append(evidence, "CronJob "+ref+" does not exist"),
			Explanation: "the spec switches the backup add-on on, but its CronJob is missing: no scheduled etcd backup runs",
			Fix:         "run `ohmytalos apply` to install it"}
	}
	evidence = append(evidence, fmt.Sprintf("CronJob %s runs %q (every %s at most)", ref, cj.Schedule, b.Interval))
	if cj.Suspended {
		return Result{Status: StatusWarn, Evidence: append(evidence, "the CronJob is suspended"),
			Explanation: "scheduled etcd backups are suspended",
			Fix:         fmt.Sprintf("resume it: kubectl -n %s patch cronjob %s -p '{\"spec\":{\"suspend\":false}}'", b.Namespace, b.CronJob)}
	}
	return scheduledAge(b, cj, now, evidence)
}

// scheduledAge compares the last successful run with the schedule.
func scheduledAge(b *ScheduledBackup, cj *CronJobStatus, now time.Time, evidence []string) Result {
	warnAge := BackupWarnIntervals * b.Interval
	failAge := max(BackupFailIntervals*b.Interval, BackupMinFailAge)
	logs := fmt.Sprintf("read the last job's log (kubectl -n %s logs job/NAME, from kubectl -n %s get jobs) for S3 or Talos API errors; "+
		"meanwhile take one with `ohmytalos etcd snapshot --out FILE`", b.Namespace, b.Namespace)
	if cj.LastSuccessful.IsZero() {
		if !cj.LastScheduled.IsZero() {
			evidence = append(evidence, "last run scheduled "+cj.LastScheduled.UTC().Format(time.RFC3339))
		}
		return Result{Status: StatusWarn, Evidence: append(evidence, "no successful scheduled backup yet"),
			Explanation: "the backup CronJob has never succeeded: there is no etcd backup in the bucket",
			Fix:         "wait for the first run, or start one now: kubectl -n " + b.Namespace + " create job --from=cronjob/" + b.CronJob + " first-backup; " + logs}
	}
	age := now.Sub(cj.LastSuccessful).Round(time.Minute)
	evidence = append(evidence, fmt.Sprintf("last successful scheduled backup %s ago (%s)", age, cj.LastSuccessful.UTC().Format(time.RFC3339)))
	switch {
	case age > failAge:
		return Result{Status: StatusFail, Evidence: evidence,
			Explanation: fmt.Sprintf("the last successful etcd backup is older than %s: the scheduled backup has stopped", failAge),
			Fix:         logs}
	case age > warnAge:
		return Result{Status: StatusWarn, Evidence: evidence,
			Explanation: fmt.Sprintf("the last successful etcd backup is older than %d intervals (%s): runs are failing", BackupWarnIntervals, warnAge),
			Fix:         logs}
	}
	return pass(evidence...)
}

// unscheduled is the verdict for a cluster without the backup add-on.
func unscheduled(env *Env, now time.Time, evidence []string) Result {
	evidence = append(evidence, "no scheduled backup (addons.backup is off)")
	if !env.LastSnapshot.IsZero() && now.Sub(env.LastSnapshot) <= OnDemandWarnAge {
		return pass(evidence...)
	}
	return Result{Status: StatusWarn, Evidence: evidence,
		Explanation: "no scheduled etcd backup and no on-demand snapshot in the last 48h: losing the control planes would lose the cluster's state",
		Fix:         "switch on addons.backup (talos-backup to S3, e.g. Hetzner Object Storage) and run `ohmytalos apply`, or take one now with `ohmytalos etcd snapshot --out FILE`"}
}
