package spec

import (
	"strings"
	"testing"
)

// TestControlPlaneCountKeepsQuorum: scaling may lower the control planes,
// but only to an odd count of at least 1, so etcd keeps a majority.
func TestControlPlaneCountKeepsQuorum(t *testing.T) {
	for _, tc := range []struct {
		count int
		ok    bool
	}{
		{-1, false}, {0, false}, {1, true}, {2, false}, {3, true}, {4, false}, {5, true}, {6, false}, {7, true},
	} {
		s, err := Parse([]byte("name: d\n"))
		if err != nil {
			t.Fatal(err)
		}
		s.ControlPlane.Count = tc.count
		var got *Problem
		for _, p := range s.Validate() {
			if p.Field == "controlPlane.count" {
				got = &p
			}
		}
		switch {
		case tc.ok && got != nil:
			t.Errorf("count %d refused: %v", tc.count, got)
		case !tc.ok && got == nil:
			t.Errorf("count %d accepted", tc.count)
		case !tc.ok && (!strings.Contains(got.Reason, "quorum") || !strings.Contains(got.Fix, "odd")):
			t.Errorf("count %d: the problem should name the reason (quorum) and the fix (odd): %+v", tc.count, got)
		}
	}
}

// TestKeepVolumes: keepVolumes is a pool setting, off by default.
func TestKeepVolumes(t *testing.T) {
	s, err := Parse([]byte("name: d\npools:\n  - {name: db, subnet: 10.0.3.0/24, volumeSize: 10, keepVolumes: true}\n  - {name: w, subnet: 10.0.2.0/24}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !s.Pools[0].KeepVolumes || s.Pools[1].KeepVolumes {
		t.Errorf("keepVolumes = %v, %v; want true, false", s.Pools[0].KeepVolumes, s.Pools[1].KeepVolumes)
	}
}
