package cloud

import "testing"

func TestSelectorMatches(t *testing.T) {
	labels := map[string]string{"cluster": "demo", "role": "worker", "pool": "a", "ohmytalos.dev/managed": "true"}
	tests := []struct {
		sel  string
		want bool
	}{
		{"", true},
		{"cluster=demo", true},
		{"cluster==demo", true},
		{"cluster=other", false},
		{"cluster!=other", true},
		{"cluster!=demo", false},
		{"missing!=x", true},
		{"role", true},
		{"missing", false},
		{"!missing", true},
		{"!role", false},
		{"role in (worker,cp)", true},
		{"role in (cp, lb)", false},
		{"role notin (cp,lb)", true},
		{"role notin (worker)", false},
		{"missing notin (a)", true},
		{"missing in (a)", false},
		{"cluster=demo,role=worker", true},
		{"cluster=demo,role=cp", false},
		{" cluster = demo , role in ( worker , cp ) ", true},
		{"ohmytalos.dev/managed=true,!ohmytalos.dev/temporary", true},
		{"cluster=demo,pool in (a,b),role!=cp,!gone", true},
		{"cluster=", false},
	}
	for _, tt := range tests {
		sel, err := ParseSelector(tt.sel)
		if err != nil {
			t.Errorf("ParseSelector(%q): %v", tt.sel, err)
			continue
		}
		if got := sel.Matches(labels); got != tt.want {
			t.Errorf("%q matches = %v, want %v", tt.sel, got, tt.want)
		}
	}
}

func TestSelectorEmptyValue(t *testing.T) {
	sel, err := ParseSelector("k=")
	if err != nil {
		t.Fatal(err)
	}
	if !sel.Matches(map[string]string{"k": ""}) || sel.Matches(map[string]string{"k": "v"}) {
		t.Error("k= must match exactly the empty value")
	}
}

func TestSelectorErrors(t *testing.T) {
	for _, sel := range []string{
		"role in (a,b", "role in a,b)", "role in ()", "role between (a)", "a b c", "=v", "k=v,", "!", "k=(v)",
		"ro le=x", "role in ((a))", "k!=a=b",
	} {
		if _, err := ParseSelector(sel); err == nil {
			t.Errorf("ParseSelector(%q) succeeded, want an error", sel)
		}
	}
}
