package ui

import (
	"strconv"

	"github.com/charmbracelet/bubbles/key"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// maxErrorLines is how many wrapped lines an error takes on a screen
// before it is cut; the FullError key shows all of it.
const maxErrorLines = 6

// errorText renders a long message (an error) wrapped at word boundaries
// to width, never cut at the pane's edge. Unless full, a message taller
// than maxErrorLines shows its first lines and a line naming the key that
// shows the rest.
func errorText(c *common, style lipgloss.Style, text string, width int) string {
	lines := wrapLines(text, width)
	if !c.fullErrors && len(lines) > maxErrorLines {
		more := len(lines) - (maxErrorLines - 1)
		lines = append(lines[:maxErrorLines-1:maxErrorLines-1],
			c.styles.Subtle.Render(ansi.Truncate("… "+strconv.Itoa(more)+" more lines: "+c.keys.FullError.Help().Key+" shows the whole error", width, "…")))
		return style.Render(strings.Join(lines[:len(lines)-1], "\n")) + "\n" + lines[len(lines)-1]
	}
	return style.Render(strings.Join(lines, "\n"))
}

// wrapLines wraps text to width: at spaces where it can, inside a word
// only when the word alone is wider than the line. Existing line breaks
// are kept.
func wrapLines(text string, width int) []string {
	width = max(width, 10)
	var out []string
	for _, para := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		wrapped := ansi.Wrap(para, width, "")
		out = append(out, strings.Split(wrapped, "\n")...)
	}
	return out
}

// fullErrorKey is the FullError binding with help for what it does now.
func fullErrorKey(c *common) key.Binding {
	k := c.keys.FullError
	if c.fullErrors {
		k.SetHelp(k.Help().Key, "short error")
	}
	return k
}
