package addons

import (
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// Backup is the scheduled etcd backup add-on (talos-backup).
const Backup = "talos-backup"

// Names of the backup add-on's objects.
const (
	// BackupCronJob is the CronJob the doctor reads lastSuccessfulTime from.
	BackupCronJob = "talos-backup"
	// backupS3Secret holds the S3 credentials (AWS_* keys, read by the AWS
	// credential chain talos-backup's minio client uses).
	backupS3Secret = "talos-backup-s3"
	// backupTalosAccount is the talos.dev ServiceAccount: Talos answers it
	// with a Secret of the same name holding a talosconfig for its roles.
	backupTalosAccount = "talos-backup-secrets"
)

// BackupInputs are the backup add-on's apply-time facts.
type BackupInputs struct {
	// Recipient is the age public key snapshots are encrypted to when the
	// spec names none: the cluster's own.
	Recipient string
	// AccessKeyID and SecretAccessKey are the looked-up S3 credentials; they
	// go into the talos-backup-s3 Secret only.
	AccessKeyID, SecretAccessKey string
}

// talosBackup renders talos-backup as a CronJob (facts: siderolabs/talos-backup
// README.md, cronjob.sample.yaml and pkg/config/service.go for the
// environment: BUCKET, AWS_REGION, CUSTOM_S3_ENDPOINT, S3_PREFIX,
// CLUSTER_NAME, AGE_X25519_PUBLIC_KEY). The pod reaches the Talos API through
// Talos' kubernetesTalosAPIAccess feature: the talos.dev/v1alpha1
// ServiceAccount asks for the os:etcd:backup role, and Talos writes the
// matching talosconfig into a Secret mounted at /var/run/secrets/talos.dev.
func talosBackup(sp *spec.Spec, in BackupInputs) Addon {
	b := sp.Addons.Backup
	ns := spec.BackupNamespace
	recipient := b.AgeRecipient
	if recipient == "" {
		recipient = in.Recipient
	}
	account := newObject("talos.dev/v1alpha1", "ServiceAccount", ns, backupTalosAccount).
		with("spec", m{"roles": strs("os:etcd:backup")})
	creds := newObject("v1", "Secret", ns, backupS3Secret).with("type", "Opaque").
		with("stringData", m{"AWS_ACCESS_KEY_ID": in.AccessKeyID, "AWS_SECRET_ACCESS_KEY": in.SecretAccessKey})
	vars := env("AWS_REGION", b.Region, "CUSTOM_S3_ENDPOINT", b.Endpoint, "BUCKET", b.Bucket,
		"CLUSTER_NAME", sp.Name, "S3_PREFIX", b.Prefix, "AGE_X25519_PUBLIC_KEY", recipient, "ENABLE_COMPRESSION", "false")
	vars = append(vars, secretEnv("AWS_ACCESS_KEY_ID", backupS3Secret, "AWS_ACCESS_KEY_ID"),
		secretEnv("AWS_SECRET_ACCESS_KEY", backupS3Secret, "AWS_SECRET_ACCESS_KEY"))
	c := m{
		"name": "talos-backup", "image": image("ghcr.io/siderolabs/talos-backup", b.Version),
		"workingDir": "/tmp", "command": strs("/talos-backup"), "env": vars,
		"securityContext": m{"runAsUser": 1000, "runAsGroup": 1000, "runAsNonRoot": true, "allowPrivilegeEscalation": false,
			"capabilities": m{"drop": strs("ALL")}, "seccompProfile": m{"type": "RuntimeDefault"}},
		"volumeMounts": l{mount("tmp", "/tmp"), mount("talos-secrets", "/var/run/secrets/talos.dev")},
	}
	job := newObject("batch/v1", "CronJob", ns, BackupCronJob).with("spec", m{
		"schedule":                   b.Schedule,
		"concurrencyPolicy":          "Forbid",
		"successfulJobsHistoryLimit": 3,
		"failedJobsHistoryLimit":     3,
		"jobTemplate": m{"spec": m{
			"backoffLimit": 3,
			"template": m{"spec": m{
				"restartPolicy": "OnFailure",
				"containers":    l{c},
				"volumes": l{m{"name": "tmp", "emptyDir": m{}},
					m{"name": "talos-secrets", "secret": m{"secretName": backupTalosAccount}}},
			}},
		}},
	})
	return Addon{Name: Backup, Version: b.Version, Objects: []Object{account, creds, job}}
}
