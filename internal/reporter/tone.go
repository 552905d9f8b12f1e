// Package reporter is how engine events, statuses and actions are shown:
// the plain, JSON and terminal renderers of apply and destroy, and the
// glyphs and tones the wizard's step lists use. The engine runs and emits;
// this package, at the edge, decides how that looks (after talosctl's
// pkg/reporter).
package reporter

import "github.com/ohmytalos/ohmytalos/internal/engine"

// Tone is how a status or action should be styled: renderers map it to
// their own colours.
type Tone int

// Tones.
const (
	ToneSubtle Tone = iota // pending, reuse
	ToneActive             // running, stale, update
	ToneGood               // done, create
	ToneBad                // failed, replace, delete
)

// StatusGlyph is the one-character mark of a status in lists.
func StatusGlyph(s engine.Status) string {
	switch s {
	case engine.StatusDone:
		return "✓"
	case engine.StatusFailed:
		return "✗"
	case engine.StatusRunning, engine.StatusStale:
		return "↻"
	default:
		return "·"
	}
}

// StatusTone is the style hint of a status.
func StatusTone(s engine.Status) Tone {
	switch s {
	case engine.StatusDone:
		return ToneGood
	case engine.StatusFailed:
		return ToneBad
	case engine.StatusRunning, engine.StatusStale:
		return ToneActive
	default:
		return ToneSubtle
	}
}

// ActionTone is the style hint of an action.
func ActionTone(a engine.Action) Tone {
	switch a {
	case engine.ActionCreate, engine.ActionRender:
		return ToneGood
	case engine.ActionUpdate:
		return ToneActive
	case engine.ActionReplace, engine.ActionDelete:
		return ToneBad
	default:
		return ToneSubtle
	}
}
