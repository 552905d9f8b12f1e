package addons

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/spec"
)

func backupSpec(t *testing.T, mutate func(*spec.Backup)) *spec.Spec {
	t.Helper()
	return testSpec(t, func(s *spec.Spec) {
		s.Location = "fsn1"
		s.Addons.Backup = spec.Backup{Enabled: on(true), Bucket: "demo-etcd",
			AccessKeyID:     &spec.SecretRef{Provider: "env", Ref: "S3_ACCESS_KEY"},
			SecretAccessKey: &spec.SecretRef{Provider: "env", Ref: "S3_SECRET_KEY"}}
		if mutate != nil {
			mutate(&s.Addons.Backup)
		}
	})
}

// containerEnv returns the CronJob container's env as name -> value, or
// name -> "secret:NAME/KEY" for values read from a Secret.
func containerEnv(t *testing.T, job Object) map[string]string {
	t.Helper()
	b, _ := json.Marshal(job)
	var cj struct {
		Spec struct {
			JobTemplate struct {
				Spec struct {
					Template struct {
						Spec struct {
							Containers []struct {
								Image string `json:"image"`
								Env   []struct {
									Name      string `json:"name"`
									Value     string `json:"value"`
									ValueFrom *struct {
										SecretKeyRef struct{ Name, Key string } `json:"secretKeyRef"`
									} `json:"valueFrom"`
								} `json:"env"`
							} `json:"containers"`
						} `json:"spec"`
					} `json:"template"`
				} `json:"spec"`
			} `json:"jobTemplate"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(b, &cj); err != nil {
		t.Fatal(err)
	}
	c := cj.Spec.JobTemplate.Spec.Template.Spec.Containers[0]
	out := map[string]string{"image": c.Image}
	for _, e := range c.Env {
		if e.ValueFrom != nil {
			out[e.Name] = "secret:" + e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
			continue
		}
		out[e.Name] = e.Value
	}
	return out
}

func TestBackupAddonRendersTalosBackup(t *testing.T) {
	own := "age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p"
	other := "age1lggyhqrw2nlhcxprm67z43rta597azn8gknawjehu9d9dl0jq3yqqvfafg"
	in := Inputs{Backup: BackupInputs{Recipient: own, AccessKeyID: "AKIDSECRET", SecretAccessKey: "s3-secret-key"}}
	cases := []struct {
		name   string
		mutate func(*spec.Backup)
		want   map[string]string
	}{
		{"Hetzner defaults from the location", nil, map[string]string{
			"image": "ghcr.io/siderolabs/talos-backup:" + spec.DefaultTalosBackupVersion, "BUCKET": "demo-etcd",
			"AWS_REGION": "fsn1", "CUSTOM_S3_ENDPOINT": "https://fsn1.your-objectstorage.com", "S3_PREFIX": "demo",
			"CLUSTER_NAME": "demo", "AGE_X25519_PUBLIC_KEY": own,
			"AWS_ACCESS_KEY_ID": "secret:talos-backup-s3/AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY": "secret:talos-backup-s3/AWS_SECRET_ACCESS_KEY",
			"schedule": spec.DefaultBackupSchedule}},
		{"explicit endpoint, region, prefix, recipient, schedule", func(b *spec.Backup) {
			b.Endpoint, b.Region, b.Prefix, b.AgeRecipient, b.Schedule = "https://s3.example.com", "eu-1", "prod/etcd", other, "@daily"
		}, map[string]string{"AWS_REGION": "eu-1", "CUSTOM_S3_ENDPOINT": "https://s3.example.com", "S3_PREFIX": "prod/etcd",
			"AGE_X25519_PUBLIC_KEY": other, "schedule": "@daily"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			as, err := Render(backupSpec(t, tc.mutate), in)
			if err != nil {
				t.Fatal(err)
			}
			job := find(t, as, "CronJob", BackupCronJob)
			got := containerEnv(t, job)
			got["schedule"], _ = job["spec"].(m)["schedule"].(string)
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
			if job.Namespace() != spec.BackupNamespace || job["spec"].(m)["concurrencyPolicy"] != "Forbid" {
				t.Errorf("CronJob %s, spec %v", job.Ref(), job["spec"])
			}
			sa := find(t, as, "ServiceAccount", "talos-backup-secrets")
			if sa.APIVersion() != "talos.dev/v1alpha1" || !strings.Contains(mustJSON(t, sa), `"roles":["os:etcd:backup"]`) {
				t.Errorf("talos.dev ServiceAccount = %s", mustJSON(t, sa))
			}
			if !strings.Contains(mustJSON(t, job), `"secretName":"talos-backup-secrets"`) {
				t.Error("the CronJob does not mount the Talos API credentials")
			}
		})
	}
}

func TestBackupSecretRedacted(t *testing.T) {
	as, err := Render(backupSpec(t, nil), Inputs{Backup: BackupInputs{Recipient: "age1x", AccessKeyID: "AKIDSECRET", SecretAccessKey: "s3-secret-key"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range as {
		if a.Name != Backup {
			continue
		}
		if a.Version != spec.DefaultTalosBackupVersion {
			t.Errorf("version %q", a.Version)
		}
		full, _ := Manifest(a, false)
		red, _ := Manifest(a, true)
		if !bytes.Contains(full, []byte("s3-secret-key")) {
			t.Error("the applied manifest lacks the S3 key")
		}
		if bytes.Contains(red, []byte("s3-secret-key")) || bytes.Contains(red, []byte("AKIDSECRET")) || !bytes.Contains(red, []byte(Redacted)) {
			t.Errorf("redacted manifest:\n%s", red)
		}
		return
	}
	t.Fatal("backup add-on not rendered")
}

func TestBackupOffByDefault(t *testing.T) {
	if Enabled(testSpec(t, nil))[Backup] {
		t.Error("the backup add-on is on by default")
	}
}

func mustJSON(t *testing.T, o Object) string {
	t.Helper()
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
