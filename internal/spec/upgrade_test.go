package spec

import "testing"

func TestUpgradeWorkerBatch(t *testing.T) {
	for _, tc := range []struct {
		in, want int
		bad      bool
	}{{0, 1, false}, {1, 1, false}, {3, 3, false}, {-1, 1, true}} {
		u := Upgrade{WorkerBatch: tc.in}
		if got := u.Batch(); got != tc.want {
			t.Errorf("Batch(%d) = %d, want %d", tc.in, got, tc.want)
		}
		if ps := u.validate(); (len(ps) > 0) != tc.bad || (tc.bad && ps[0].Field != "upgrade.workerBatch") {
			t.Errorf("validate(%d) = %v", tc.in, ps)
		}
	}
}

func TestUpgradeKeyParses(t *testing.T) {
	base := "name: demo\nsecrets: {hcloudToken: {provider: env, ref: HCLOUD_TOKEN}}\n"
	s, err := Parse([]byte(base + "upgrade: {workerBatch: 2}\n"))
	if err != nil || s.Upgrade.Batch() != 2 {
		t.Fatalf("upgrade.workerBatch: %v, %+v", err, s)
	}
	if _, err := Parse([]byte(base + "upgrade: {workerBatch: -2}\n")); err == nil {
		t.Error("negative batch accepted")
	}
	if _, err := Parse([]byte(base + "upgrade: {batch: 2}\n")); err == nil {
		t.Error("unknown key under upgrade accepted")
	}
}
