package releases

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Action is what Ensure does with a release.
type Action string

// The actions.
const (
	ActionInstall Action = "install"
	ActionUpgrade Action = "upgrade"
	ActionReuse   Action = "reuse"
)

// Change is what Ensure would do, for plan: the action, the chart
// version before and after, and the dotted paths of the values that
// change (names only: values may hold secrets).
type Change struct {
	Action      Action
	FromVersion string // "" on install
	ToVersion   string
	Paths       []string
	// Reason says why an upgrade with no version or value change runs
	// (the last revision did not deploy).
	Reason string
}

// Diff is the Change from cur to chartVersion with values.
func Diff(cur Current, chartVersion string, values map[string]any) Change {
	if !cur.Found {
		return Change{Action: ActionInstall, ToVersion: chartVersion}
	}

	ch := Change{Action: ActionReuse, FromVersion: cur.ChartVersion, ToVersion: chartVersion}
	ch.Paths = changedPaths(normalize(cur.Values), normalize(values), "")

	switch {
	case cur.ChartVersion != chartVersion || len(ch.Paths) > 0:
		ch.Action = ActionUpgrade
	case cur.Status != "deployed":
		ch.Action = ActionUpgrade
		ch.Reason = "revision " + strconv.Itoa(cur.Revision) + " is " + cur.Status
	}

	return ch
}

// String is the change for an operator: "upgrade 1.0.0 -> 1.1.0 (a.b, c)".
func (c Change) String() string {
	s := string(c.Action)
	switch {
	case c.Action == ActionInstall:
		s += " " + c.ToVersion
	case c.FromVersion != c.ToVersion:
		s += " " + c.FromVersion + " -> " + c.ToVersion
	default:
		s += " " + c.ToVersion
	}

	if len(c.Paths) > 0 {
		s += " (values: " + strings.Join(c.Paths, ", ") + ")"
	}

	if c.Reason != "" {
		s += " (" + c.Reason + ")"
	}

	return s
}

// changedPaths lists the dotted paths where a and b differ: maps are
// compared key by key, everything else whole.
func changedPaths(a, b map[string]any, prefix string) []string {
	var out []string

	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}

	for k := range b {
		keys[k] = true
	}

	for k := range keys {
		p := prefix + strings.ReplaceAll(k, ".", `\.`)
		am, aok := a[k].(map[string]any)
		bm, bok := b[k].(map[string]any)

		switch {
		case aok && bok:
			out = append(out, changedPaths(am, bm, p+".")...)
		case !reflect.DeepEqual(a[k], b[k]):
			out = append(out, p)
		}
	}

	slices.Sort(out)

	return out
}

// normalize makes values JSON-shaped, as helm stores them.
func normalize(v map[string]any) map[string]any {
	raw, err := json.Marshal(v)
	if err != nil {
		return v
	}

	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		return v
	}

	return out
}
