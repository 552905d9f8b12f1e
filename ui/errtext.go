package ui

import (
	"strconv"

	"github.com/charmbracelet/bubbles/key"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/ohmytalos/ohmytalos/ui/common"
)

// maxErrorLines is how many wrapped lines an error takes on a screen
// before it is cut; the FullError key shows all of it.
const maxErrorLines = 6

// errorText renders a long message (an error) wrapped at word boundaries
// to width, never cut at the pane's edge. Unless full, a message taller
// than maxErrorLines shows its first lines and a line naming the key that
// shows the rest.
func errorText(com common.Common, full bool, style lipgloss.Style, text string, width int) string {
	lines := common.WrapLines(text, width)
	if !full && len(lines) > maxErrorLines {
		more := len(lines) - (maxErrorLines - 1)
		lines = append(lines[:maxErrorLines-1:maxErrorLines-1],
			com.Styles.Subtle.Render(ansi.Truncate("… "+strconv.Itoa(more)+" more lines: "+com.Keys.FullError.Help().Key+" shows the whole error", width, "…")))
		return style.Render(strings.Join(lines[:len(lines)-1], "\n")) + "\n" + lines[len(lines)-1]
	}
	return style.Render(strings.Join(lines, "\n"))
}

// fullErrorKey is the FullError binding with help for what it does now.
func fullErrorKey(keys common.KeyMap, full bool) key.Binding {
	k := keys.FullError
	if full {
		k.SetHelp(k.Help().Key, "short error")
	}
	return k
}
