package reconcile

import (
	"maps"
	"slices"
)

// LabelDiff is how a resource's labels differ from the wanted ones: Keys
// lists (sorted) the labels to set or drop, Have their live values and
// Want their wanted values (a key missing from Want is dropped).
type LabelDiff struct {
	Keys       []string
	Have, Want map[string]string
}

// Empty reports whether the labels need no change.
func (d LabelDiff) Empty() bool { return len(d.Keys) == 0 }

// DiffLabels reports the labels ohmytalos sets that have lacks or has with
// another value, and the owned labels have carries that want no longer
// does; labels someone else added are kept.
func DiffLabels(have, want map[string]string, owned ...string) LabelDiff {
	var keys []string
	for k, v := range want {
		if cur, ok := have[k]; !ok || cur != v {
			keys = append(keys, k)
		}
	}
	for _, k := range owned {
		if _, wanted := want[k]; !wanted {
			if _, ok := have[k]; ok {
				keys = append(keys, k)
			}
		}
	}
	if len(keys) == 0 {
		return LabelDiff{}
	}
	slices.Sort(keys)
	d := LabelDiff{Keys: keys, Have: map[string]string{}, Want: map[string]string{}}
	for _, k := range keys {
		if v, ok := have[k]; ok {
			d.Have[k] = v
		}
		if v, ok := want[k]; ok {
			d.Want[k] = v
		}
	}
	return d
}

// MergeLabels is have with want's labels set and the owned labels want
// lacks removed.
func MergeLabels(have, want map[string]string, owned ...string) map[string]string {
	out := maps.Clone(have)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, want)
	for _, k := range owned {
		if _, ok := want[k]; !ok {
			delete(out, k)
		}
	}
	return out
}
