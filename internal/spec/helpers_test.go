package spec

import "testing"

// validated is a spec named demo, changed by mutate when it is set, then
// defaulted and validated.
func validated(mutate func(*Spec)) (*Spec, Problems) {
	s := &Spec{Name: "demo"}
	if mutate != nil {
		mutate(s)
	}
	s.Default()
	return s, s.Validate()
}

// wantProblemOn fails t unless ps is empty (field "") or has a problem on
// field; every problem must carry a reason and a fix.
func wantProblemOn(t *testing.T, ps Problems, field string) {
	t.Helper()
	switch {
	case field == "" && len(ps) > 0:
		t.Fatalf("unexpected problems: %v", ps)
	case field != "" && !ps.Has(field):
		t.Fatalf("problems %v lack %s", ps, field)
	}
	for _, p := range ps {
		if p.Reason == "" || p.Fix == "" {
			t.Errorf("problem without reason or fix: %v", p)
		}
	}
}

// parseProblems parses yaml, which must fail with Problems, and returns them.
func parseProblems(t *testing.T, yaml string) Problems {
	t.Helper()
	_, err := Parse([]byte(yaml))
	ps, ok := err.(Problems)
	if !ok {
		t.Fatalf("err = %v, want Problems", err)
	}
	return ps
}
