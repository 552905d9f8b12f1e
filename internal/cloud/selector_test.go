package cloud

import (
	"strings"
	"testing"
)

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
	for _, c := range []struct{ sel, want string }{
		{"role in (a,b", ""}, {"role in a,b)", ""}, {"role between (a)", ""}, {"a b c", ""}, {"=v", ""},
		{"k=v,", ""}, {"!", ""}, {"k=(v)", ""}, {"ro le=x", ""}, {"role in ((a))", ""}, {"k!=a=b", ""},
		// Keys Kubernetes refuses (apimachinery's qualified names), and so
		// does Hetzner: an empty name, an empty or non-DNS prefix, two slashes.
		{"a//b=x", "a//b"}, {"a/b/c", "a/b/c"}, {"/b=x", "/b"}, {"a/=x", "a/"},
		{"Ex_ample.com/k=v", "Ex_ample.com/k"}, {"-k=v", "-k"}, {"k-=v", "k-"},
		{strings.Repeat("k", 64) + "=v", "63"},
		// Values: at most 63, alphanumeric at the ends.
		{"k=-v", "-v"}, {"k=" + strings.Repeat("v", 64), "63"},
		// Hetzner's own rules on top of Kubernetes'.
		{"k>1", "gt or lt"}, {"k<1", "gt or lt"}, {"hetzner.cloud/x=y", "reserves"},
	} {
		_, err := ParseSelector(c.sel)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseSelector(%q) = %v, want an error naming %q", c.sel, err, c.want)
		}
	}
}

func TestCheckLabel(t *testing.T) {
	for _, c := range []struct {
		key, value string
		ok         bool
	}{
		{"ohmytalos.io/cluster", "demo", true},
		{"role", "", true},
		{"node.kubernetes.io/role", "storage", true},
		{"A_b.c-D", "x.Y_z-1", true},
		{"a//b", "v", false},
		{"a/b/c", "v", false},
		{"", "v", false},
		{"/k", "v", false},
		{"UPPER.example/k", "v", false},
		{"hetzner.cloud/k", "v", false},
		{"k", "v v", false},
		{"k", "-v", false},
		{strings.Repeat("p", 254) + "/k", "v", false},
	} {
		err := CheckLabelKey(c.key)
		if err == nil {
			err = CheckLabelValue(c.key, c.value)
		}
		if (err == nil) != c.ok {
			t.Errorf("label %q=%q: err %v, want ok=%v", c.key, c.value, err, c.ok)
		}
	}
}

func TestSelectorEmptySet(t *testing.T) {
	// Kubernetes reads "in ()" as the set holding the empty value.
	sel, err := ParseSelector("role in ()")
	if err != nil {
		t.Fatal(err)
	}
	if !sel.Matches(map[string]string{"role": ""}) || sel.Matches(map[string]string{"role": "worker"}) {
		t.Error(`role in () must match exactly the empty value`)
	}
}
