package reporter

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/engine"
)

func TestTerminalRendererCollapsesProgress(t *testing.T) {
	var buf bytes.Buffer
	r := Terminal(&buf, true)
	r(engine.Event{Step: "images", Kind: engine.KindStarted, Message: "Images"})
	for _, f := range []float64{0.05, 0.10, 0.20, 0.30, 0.55, 0.60} {
		r(engine.Event{Step: "images", Kind: engine.KindProgress, Resource: "image/a", Message: "write: copying", Fraction: f})
	}
	r(engine.Event{Step: "images", Kind: engine.KindProgress, Resource: "image/a", Message: "snapshot: creating", Fraction: 0.6})
	r(engine.Event{Step: "images", Kind: engine.KindFailed, Error: "boom"})
	out := buf.String()
	if n := strings.Count(out, "write: copying"); n != 3 {
		t.Errorf("progress lines = %d, want one per quarter (3):\n%s", n, out)
	}
	for _, want := range []string{"▶ Images", "snapshot: creating", "✗ boom"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Error("colour codes with colours off")
	}
}
