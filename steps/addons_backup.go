package steps

import (
	"context"
	"strings"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/addons"
	"github.com/ohmytalos/ohmytalos/internal/doctor"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/etcdbackup"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// backupRecipientPlaceholder stands for the cluster's age recipient where
// plan renders without loading the age identity.
const backupRecipientPlaceholder = "(the cluster's age recipient)"

// plannedBackupInputs are the backup add-on's inputs for plan and the
// add-on record: no secret is looked up and no identity loaded.
func plannedBackupInputs() addons.BackupInputs {
	return addons.BackupInputs{Recipient: backupRecipientPlaceholder, AccessKeyID: addons.Redacted, SecretAccessKey: addons.Redacted}
}

// backupInputs looks up the backup add-on's S3 credentials and the
// cluster's age recipient; nothing when the add-on is off.
func (d *Deps) backupInputs(ctx context.Context, env *engine.Env) (addons.BackupInputs, error) {
	b := env.Spec.Addons.Backup
	if !b.On() {
		return addons.BackupInputs{}, nil
	}
	var in addons.BackupInputs
	if b.AgeRecipient == "" {
		r, err := env.State.Recipient()
		if err != nil {
			return in, err
		}
		in.Recipient = r
	}
	// Validation guarantees both references when the add-on is on.
	id, err := d.Secret(ctx, "addons.backup.accessKeyID", *b.AccessKeyID)
	if err != nil {
		return in, err
	}
	key, err := d.Secret(ctx, "addons.backup.secretAccessKey", *b.SecretAccessKey)
	if err != nil {
		return in, err
	}
	in.AccessKeyID, in.SecretAccessKey = strings.TrimSpace(id.Reveal()), strings.TrimSpace(key.Reveal())
	return in, nil
}

// doctorBackup tells the doctor about the cluster's etcd backups: the
// backup add-on's CronJob when the spec switches it on, and when
// `ohmytalos etcd snapshot` last ran (from the state).
func doctorBackup(env *engine.Env) (*doctor.ScheduledBackup, time.Time) {
	var last time.Time
	if r, ok, err := etcdbackup.Last(env.State); err == nil && ok {
		last = r.Taken
	}
	b := env.Spec.Addons.Backup
	if !b.On() {
		return nil, last
	}
	// Validation already accepted the schedule; a zero interval only makes
	// the age limits strict.
	interval, _ := spec.ScheduleInterval(b.Schedule)
	return &doctor.ScheduledBackup{Namespace: spec.BackupNamespace, CronJob: addons.BackupCronJob, Schedule: b.Schedule, Interval: interval}, last
}
