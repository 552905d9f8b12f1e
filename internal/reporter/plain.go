package reporter

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/engine"
)

// Plain prints events as lines for scripts and CI.
func Plain(w io.Writer) func(engine.Event) {
	var mu sync.Mutex
	return func(ev engine.Event) {
		mu.Lock()
		defer mu.Unlock()
		var line string
		switch ev.Kind {
		case engine.KindResource:
			line = fmt.Sprintf("%s %s", ev.Action, ev.Resource)
			if ev.ID != 0 {
				line += fmt.Sprintf(" (id %d)", ev.ID)
			}
			if ev.Message != "" {
				line += ": " + ev.Message
			}
		case engine.KindProgress:
			line = ev.Message
			if ev.Resource != "" {
				line = ev.Resource + " " + line
			}
			if ev.Fraction > 0 && !strings.Contains(ev.Message, "%") {
				line += fmt.Sprintf(" %3.0f%%", ev.Fraction*100)
			}
			if ev.Bytes > 0 {
				line += fmt.Sprintf(" %s", HumanBytes(ev.Bytes))
			}
		case engine.KindFailed:
			line = fmt.Sprintf("FAILED: %s", ev.Error)
		case engine.KindWarning:
			line = "warning: " + ev.Message
		case engine.KindDone:
			line = fmt.Sprintf("%s (%s)", ev.Message, ev.Elapsed.Round(100*time.Millisecond))
		default:
			line = ev.Message
		}
		fmt.Fprintf(w, "[%s] %s\n", ev.Step, line)
	}
}

// JSON prints one JSON object per event per line.
func JSON(w io.Writer) func(engine.Event) {
	var mu sync.Mutex
	enc := json.NewEncoder(w)
	return func(ev engine.Event) {
		mu.Lock()
		defer mu.Unlock()
		_ = enc.Encode(ev)
	}
}

// HumanBytes formats a byte count in binary units (1023 B, 1.5 KiB,
// 2.0 MiB): the one formatting of sizes shared by the plain renderer and
// the wizard's progress rows.
func HumanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
