package reconcile

import (
	"maps"
	"slices"
	"testing"
)

func TestDiffLabels(t *testing.T) {
	want := map[string]string{"a": "1", "b": "2"}
	cases := []struct {
		name       string
		have       map[string]string
		owned      []string
		keys       []string
		old, wants map[string]string
	}{
		{"same, others kept", map[string]string{"a": "1", "b": "2", "x": "y"}, nil, nil, nil, nil},
		{"missing", map[string]string{"a": "1"}, nil, []string{"b"}, map[string]string{}, map[string]string{"b": "2"}},
		{"other value", map[string]string{"a": "1", "b": "3"}, nil, []string{"b"}, map[string]string{"b": "3"}, map[string]string{"b": "2"}},
		{"owned gone", map[string]string{"a": "1", "b": "2", "c": "true"}, []string{"c"}, []string{"c"}, map[string]string{"c": "true"}, map[string]string{}},
		{"owned absent", map[string]string{"a": "1", "b": "2"}, []string{"c"}, nil, nil, nil},
	}
	for _, c := range cases {
		d := DiffLabels(c.have, want, c.owned...)
		if !slices.Equal(d.Keys, c.keys) || !maps.Equal(d.Have, c.old) || !maps.Equal(d.Want, c.wants) || d.Empty() != (len(c.keys) == 0) {
			t.Errorf("%s: diff = %+v, want keys %v have %v want %v", c.name, d, c.keys, c.old, c.wants)
		}
		merged := MergeLabels(c.have, want, c.owned...)
		if again := DiffLabels(merged, want, c.owned...); !again.Empty() {
			t.Errorf("%s: merged %v still differs: %+v", c.name, merged, again)
		}
		if c.have["x"] != "" && merged["x"] != c.have["x"] {
			t.Errorf("%s: merged %v lost a label someone else set", c.name, merged)
		}
	}
}
