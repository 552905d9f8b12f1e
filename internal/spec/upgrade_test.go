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
