package common

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// Wrap wraps text to width columns.
func Wrap(s string, width int) string {
	return lipgloss.NewStyle().Width(max(width, 10)).Render(s)
}

// Truncate cuts s to w runes with an ellipsis.
func Truncate(s string, w int) string {
	r := []rune(s)
	if len(r) <= w {
		return s
	}
	if w <= 1 {
		return string(r[:w])
	}
	return string(r[:w-1]) + "…"
}

// JoinSides lays two blocks side by side when there is room, else stacks
// them.
func JoinSides(left, right string, width, gap int) string {
	if lipgloss.Width(left)+gap+lipgloss.Width(right) <= width {
		return lipgloss.JoinHorizontal(lipgloss.Top, left, lipgloss.NewStyle().Width(gap).Render(""), right)
	}
	return lipgloss.JoinVertical(lipgloss.Left, left, "", right)
}

// WrapLines wraps text to width: at spaces where it can, inside a word
// only when the word alone is wider than the line. Existing line breaks
// are kept.
func WrapLines(text string, width int) []string {
	width = max(width, 10)
	var out []string
	for _, para := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		wrapped := ansi.Wrap(para, width, "")
		out = append(out, strings.Split(wrapped, "\n")...)
	}
	return out
}

// Tail keeps the last n lines of s.
func Tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if n > 0 && len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Indent prefixes every line of s with n spaces.
func Indent(s string, n int) string {
	pad := strings.Repeat(" ", n)
	return pad + strings.ReplaceAll(s, "\n", "\n"+pad)
}

// LineCount counts the lines of a rendered block.
func LineCount(s string) int {
	if s == "" {
		return 0
	}
	return strings.Count(strings.TrimRight(s, "\n"), "\n") + 1
}
