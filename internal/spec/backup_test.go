package spec

import (
	"strings"
	"testing"
	"time"
)

func TestBackupDefaultsAndValidation(t *testing.T) {
	on := true
	full := func(s *Spec) {
		s.Location = "nbg1"
		s.Addons.Backup = Backup{Enabled: &on, Bucket: "demo-etcd",
			AccessKeyID:     &SecretRef{Provider: "env", Ref: "S3_ACCESS_KEY"},
			SecretAccessKey: &SecretRef{Provider: "bw", Ref: "0b6f6c1e-2f0a-4c39-9a57-1c2b0f8b7d11"}}
	}
	cases := []struct {
		name      string
		mutate    func(*Spec)
		wantField string
	}{
		{"off by default, nothing required", nil, ""},
		{"on with Hetzner defaults", full, ""},
		{"no bucket", func(s *Spec) { full(s); s.Addons.Backup.Bucket = "" }, "addons.backup.bucket"},
		{"bucket with capitals", func(s *Spec) { full(s); s.Addons.Backup.Bucket = "Demo" }, "addons.backup.bucket"},
		{"http endpoint", func(s *Spec) { full(s); s.Addons.Backup.Endpoint = "http://minio:9000" }, "addons.backup.endpoint"},
		{"no region outside Object Storage locations", func(s *Spec) { full(s); s.Location = "ash" }, "addons.backup.region"},
		{"bad schedule", func(s *Spec) { full(s); s.Addons.Backup.Schedule = "every day" }, "addons.backup.schedule"},
		{"missing credential", func(s *Spec) { full(s); s.Addons.Backup.SecretAccessKey = nil }, "addons.backup.secretAccessKey"},
		{"bad credential provider", func(s *Spec) { full(s); s.Addons.Backup.AccessKeyID.Provider = "vault" }, "addons.backup.accessKeyID.provider"},
		{"bad recipient", func(s *Spec) { full(s); s.Addons.Backup.AgeRecipient = "ssh-ed25519 AAAA" }, "addons.backup.ageRecipient"},
		{"bad version", func(s *Spec) { s.Addons.Backup.Version = "latest" }, "addons.backup.version"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, ps := validated(c.mutate)
			wantProblemOn(t, ps, c.wantField)
		})
	}
	s := &Spec{Name: "demo"}
	full(s)
	s.Default()
	b := s.Addons.Backup
	if b.Region != "nbg1" || b.Endpoint != "https://nbg1.your-objectstorage.com" || b.Prefix != "demo" ||
		b.Schedule != DefaultBackupSchedule || b.Version != DefaultTalosBackupVersion {
		t.Errorf("defaults = %+v", b)
	}
}

// TestScheduleInterval holds ScheduleInterval to what Kubernetes accepts
// (robfig/cron/v3 ParseStandard, as the CronJob validation and controller
// parse spec.schedule) and to cron's day semantics.
func TestScheduleInterval(t *testing.T) {
	day := 24 * time.Hour
	cases := []struct {
		schedule string
		want     time.Duration
		err      string
	}{
		{"0 */6 * * *", 6 * time.Hour, ""},
		{"*/15 * * * *", 15 * time.Minute, ""},
		{"30 2 * * *", day, ""},
		{"0 1,13 * * *", 12 * time.Hour, ""},
		{"0 0,6 * * *", 18 * time.Hour, ""},
		{"0 3 * * 0", 7 * day, ""},
		{"0 3 * * 1-5", 3 * day, ""},
		// Names, as Kubernetes accepts them.
		{"0 3 * * MON", 7 * day, ""},
		{"0 3 * * mon-fri", 3 * day, ""},
		{"0 3 1 JAN,JUL *", 184 * day, ""}, // Jul 1 -> Jan 1
		// The calendar, not a 31-day month: May 31 -> Jul 31.
		{"0 3 31 * *", 61 * day, ""},
		{"0 3 1 * *", 31 * day, ""},
		// Day-of-month and day-of-week both set: cron runs on either.
		{"0 0 1 * 1", 7 * day, ""},
		{"0 0 15 * 6", 7 * day, ""},
		// A leap day: four years.
		{"0 0 29 2 *", (4*365 + 1) * day, ""},
		{"@daily", day, ""},
		{"@hourly", time.Hour, ""},
		{"@weekly", 7 * day, ""},
		{"@every 90m", 90 * time.Minute, ""},
		{"0 */6 * *", 0, "expected exactly 5 fields"},
		{"61 * * * *", 0, "above maximum (59)"},
		{"0 5-2 * * *", 0, "beyond end of range"},
		{"*/0 * * * *", 0, "step of range"},
		{"0 3 * * 7", 0, "above maximum (6)"},
		{"0 3 * * MONDAY", 0, "failed to parse"},
		{"0 0 30 2 *", 0, "never runs"},
		{"CRON_TZ=UTC 0 3 * * *", 0, "time zone"},
		{"", 0, "empty spec"},
	}
	for _, c := range cases {
		got, err := ScheduleInterval(c.schedule)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err %v, want %q", c.schedule, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q = %v, %v; want %v", c.schedule, got, err, c.want)
		}
	}
}
