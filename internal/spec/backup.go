package spec

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"filippo.io/age"
)

// DefaultTalosBackupVersion is the talos-backup release the backup add-on
// runs (ghcr.io/siderolabs/talos-backup; github.com/siderolabs/talos-backup).
const DefaultTalosBackupVersion = "v0.1.0-beta.3"

// DefaultBackupSchedule takes a snapshot every six hours.
const DefaultBackupSchedule = "0 */6 * * *"

// BackupNamespace is where the backup CronJob runs; the control planes'
// machine config allows Talos API access (os:etcd:backup) from it.
const BackupNamespace = "kube-system"

// Backup is the scheduled etcd backup add-on: talos-backup as a CronJob
// that snapshots etcd over the Talos API, encrypts it with age and uploads
// it to S3-compatible storage such as Hetzner Object Storage.
type Backup struct {
	// Enabled switches the add-on; off by default.
	Enabled *bool `yaml:"enabled,omitempty"`
	// Version is the talos-backup release, "vX.Y.Z[-pre]".
	Version string `yaml:"version,omitempty"`
	// Schedule is the CronJob's cron schedule (5 fields or @daily...).
	Schedule string `yaml:"schedule,omitempty"`
	// Bucket is the S3 bucket the snapshots go to.
	Bucket string `yaml:"bucket,omitempty"`
	// Endpoint is the S3 API, e.g. https://fsn1.your-objectstorage.com
	// (default: Hetzner Object Storage in Region).
	Endpoint string `yaml:"endpoint,omitempty"`
	// Region is the S3 region, e.g. fsn1 (default: the cluster's location
	// when Hetzner Object Storage is offered there).
	Region string `yaml:"region,omitempty"`
	// Prefix is the key prefix inside the bucket (default: the cluster name).
	Prefix string `yaml:"prefix,omitempty"`
	// AgeRecipient is the age public key snapshots are encrypted to
	// (default: the cluster's own, the state's identity).
	AgeRecipient string `yaml:"ageRecipient,omitempty"`
	// AccessKeyID and SecretAccessKey are references to the S3 credentials.
	AccessKeyID     *SecretRef `yaml:"accessKeyID,omitempty"`
	SecretAccessKey *SecretRef `yaml:"secretAccessKey,omitempty"`
}

// On reports whether the (defaulted) backup add-on is switched on.
func (b Backup) On() bool { return b.Enabled != nil && *b.Enabled }

// objectStorageRegions are Hetzner Object Storage's locations.
var objectStorageRegions = map[string]bool{"fsn1": true, "nbg1": true, "hel1": true}

func (s *Spec) defaultBackup() {
	b := &s.Addons.Backup
	if b.Enabled == nil {
		b.Enabled = boolPtr(false)
	}
	if b.Version == "" {
		b.Version = DefaultTalosBackupVersion
	}
	if b.Schedule == "" {
		b.Schedule = DefaultBackupSchedule
	}
	if b.Region == "" && objectStorageRegions[s.Location] {
		b.Region = s.Location
	}
	if b.Endpoint == "" && objectStorageRegions[b.Region] {
		b.Endpoint = "https://" + b.Region + ".your-objectstorage.com"
	}
	if b.Prefix == "" {
		b.Prefix = s.Name
	}
}

// bucketName follows S3's rules: 3-63 lowercase letters, digits, dots and
// hyphens, starting and ending with a letter or digit.
var bucketName = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)

func (s *Spec) validateBackup(add func(field, reason, fix string)) {
	b := s.Addons.Backup
	if !addonVersion.MatchString(b.Version) {
		add("addons.backup.version", fmt.Sprintf("%q is not a release version", b.Version),
			fmt.Sprintf("use the form %q (the pinned default), or omit it", DefaultTalosBackupVersion))
	}
	if !b.On() {
		return
	}
	if _, err := ScheduleInterval(b.Schedule); err != nil {
		add("addons.backup.schedule", err.Error(), `use a cron schedule such as "0 */6 * * *" or "@daily"`)
	}
	if !bucketName.MatchString(b.Bucket) {
		add("addons.backup.bucket", fmt.Sprintf("%q is not an S3 bucket name", b.Bucket),
			"name the bucket (3-63 lowercase letters, digits, dots, hyphens) created in your object storage")
	}
	if u, err := url.Parse(b.Endpoint); err != nil || u.Scheme != "https" || u.Host == "" {
		add("addons.backup.endpoint", fmt.Sprintf("%q is not an https URL", b.Endpoint),
			"set the S3 endpoint, e.g. https://fsn1.your-objectstorage.com for Hetzner Object Storage in fsn1")
	}
	if b.Region == "" {
		add("addons.backup.region", "is required", "set the S3 region, e.g. fsn1")
	}
	if b.AgeRecipient != "" {
		if _, err := age.ParseX25519Recipient(b.AgeRecipient); err != nil {
			add("addons.backup.ageRecipient", fmt.Sprintf("%q is not an age public key", b.AgeRecipient),
				"use the age1... line age-keygen prints, or omit it to use the cluster's own")
		}
	}
	for field, r := range map[string]*SecretRef{"addons.backup.accessKeyID": b.AccessKeyID, "addons.backup.secretAccessKey": b.SecretAccessKey} {
		if r == nil {
			add(field, "is required when the backup is on", `reference the S3 credential, e.g. {provider: env, ref: S3_ACCESS_KEY}`)
			continue
		}
		validateRef(field, *r, add)
	}
	if strings.Contains(b.Prefix, "..") {
		add("addons.backup.prefix", fmt.Sprintf("%q holds \"..\"", b.Prefix), "use a plain key prefix such as the cluster name")
	}
}
