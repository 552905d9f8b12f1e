package releases

import (
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	vals := map[string]any{"a": map[string]any{"b": 1, "c": []any{"x"}}, "d": "e", "dotted.key": true}

	if ch := Diff(Current{}, "1.0.0", vals); ch.Action != ActionInstall || ch.ToVersion != "1.0.0" {
		t.Fatalf("absent: %+v", ch)
	}

	// Values as helm stores them (JSON: numbers are float64) equal ours.
	cur := Current{Found: true, Revision: 3, ChartVersion: "1.0.0", Status: "deployed",
		Values: map[string]any{"a": map[string]any{"b": float64(1), "c": []any{"x"}}, "d": "e", "dotted.key": true}}
	if ch := Diff(cur, "1.0.0", vals); ch.Action != ActionReuse || len(ch.Paths) != 0 {
		t.Fatalf("same: %+v", ch)
	}

	changed := map[string]any{"a": map[string]any{"b": 2, "c": []any{"x", "y"}}, "dotted.key": false, "f": 1}
	ch := Diff(cur, "1.1.0", changed)

	if ch.Action != ActionUpgrade || ch.FromVersion != "1.0.0" || ch.ToVersion != "1.1.0" {
		t.Fatalf("changed: %+v", ch)
	}

	if got, want := strings.Join(ch.Paths, " "), `a.b a.c d dotted\.key f`; got != want {
		t.Fatalf("paths %q, want %q", got, want)
	}

	if got := ch.String(); got != `upgrade 1.0.0 -> 1.1.0 (values: a.b, a.c, d, dotted\.key, f)` {
		t.Fatalf("String %q", got)
	}

	cur.Status = "failed"
	if ch := Diff(cur, "1.0.0", vals); ch.Action != ActionUpgrade || !strings.Contains(ch.Reason, "revision 3 is failed") {
		t.Fatalf("failed revision: %+v", ch)
	}
}
