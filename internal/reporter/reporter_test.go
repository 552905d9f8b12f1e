package reporter

import (
	"bytes"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/ohmytalos/ohmytalos/internal/engine"
)

func TestPlain(t *testing.T) {
	var buf bytes.Buffer
	r := Plain(&buf)
	r(engine.Event{Step: "images", Kind: engine.KindProgress, Message: "writing disk", Fraction: 0.5, Bytes: 3 << 20})
	r(engine.Event{Step: "network", Kind: engine.KindResource, Action: "create", Resource: "network/demo", ID: 7})
	want := "[images] writing disk  50% 3.0 MiB\n[network] create network/demo (id 7)\n"
	if buf.String() != want {
		t.Errorf("got %q want %q", buf.String(), want)
	}
}

// TestStatusGlyphsAndTones checks what a reader of the step list relies
// on: the four outcomes look different from each other in glyph and tone,
// stale reads as work to do, and every glyph takes one terminal cell so
// the step names line up.
func TestStatusGlyphsAndTones(t *testing.T) {
	outcomes := []engine.Status{engine.StatusPending, engine.StatusRunning, engine.StatusDone, engine.StatusFailed}
	glyphs, tones := map[string]engine.Status{}, map[Tone]engine.Status{}
	for _, s := range outcomes {
		g := StatusGlyph(s)
		if w := ansi.StringWidth(g); w != 1 {
			t.Errorf("%s: glyph %q is %d cells wide, want 1", s, g, w)
		}
		if other, ok := glyphs[g]; ok {
			t.Errorf("%s and %s share the glyph %q", s, other, g)
		}
		glyphs[g] = s
		if other, ok := tones[StatusTone(s)]; ok {
			t.Errorf("%s and %s share the tone %d", s, other, StatusTone(s))
		}
		tones[StatusTone(s)] = s
	}
	if StatusGlyph(engine.StatusStale) != StatusGlyph(engine.StatusRunning) || StatusTone(engine.StatusStale) != StatusTone(engine.StatusRunning) {
		t.Errorf("stale shows %q/%d, want running's %q/%d: apply runs it again", StatusGlyph(engine.StatusStale), StatusTone(engine.StatusStale), StatusGlyph(engine.StatusRunning), StatusTone(engine.StatusRunning))
	}
	if StatusTone(engine.StatusFailed) != ToneBad || StatusTone(engine.StatusDone) != ToneGood {
		t.Errorf("failed/done tones = %d/%d, want bad/good", StatusTone(engine.StatusFailed), StatusTone(engine.StatusDone))
	}
	if u := engine.Status("unknown"); StatusGlyph(u) != StatusGlyph(engine.StatusPending) || StatusTone(u) != StatusTone(engine.StatusPending) {
		t.Errorf("an unknown status shows %q/%d, want pending's look", StatusGlyph(u), StatusTone(u))
	}
}
