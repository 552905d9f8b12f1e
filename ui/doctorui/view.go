package doctorui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/ohmytalos/ohmytalos/internal/doctor"
)

// Layout: a header line and a rule, the body, then a summary or blank line
// and the help footer.
const (
	headerLines = 2
	footerLines = 2
	// idWidth fits the longest check ID ("kubeconfig-reachable") and a space.
	idWidth = 21
)

// bodyHeight is the number of lines between header and footer.
func (m *Model) bodyHeight() int {
	return max(1, m.height-headerLines-footerLines)
}

// View renders the list or the selected check's details.
func (m *Model) View() string {
	var body string
	if m.detail && len(m.rows) > 0 {
		body = m.viewport.View()
	} else {
		body = m.listView()
	}
	body = padLines(body, m.bodyHeight())
	footer := m.summary() + "\n" + m.help.ShortHelpView(m.keys.helpFor(m.detail, m.running))
	return m.header() + "\n" + body + "\n" + m.truncateLines(footer)
}

// header is the title, the SANDBOX badge and a rule.
func (m *Model) header() string {
	title := m.styles.Title.Render("ohmytalos doctor")
	if m.detail && len(m.rows) > 0 {
		title += m.styles.Subtle.Render(" › " + m.rows[m.selected].id)
	}
	if m.opts.Sandbox {
		badge := m.styles.Sandbox.Render(" SANDBOX ")
		gap := m.width - lipgloss.Width(title) - lipgloss.Width(badge)
		if gap > 0 {
			title += strings.Repeat(" ", gap) + badge
		} else {
			title += " " + badge
		}
	}
	return m.truncateLines(title) + "\n" + m.styles.Rule.Render(strings.Repeat("─", m.width))
}

// minListRows is how many check rows the list keeps before the notes
// give way: the notes say why checks skip, so they keep their lines while
// the list scrolls in what is left.
const minListRows = 5

// listView renders one line per check, scrolled so the selection shows,
// then the notes when at least minListRows of the list still fit.
func (m *Model) listView() string {
	h := m.bodyHeight()
	notes := m.noteLines()
	listH := h
	if room := h - 1 - len(notes); len(notes) > 0 && room >= min(len(m.rows), minListRows) {
		listH = min(len(m.rows), room)
	}
	first := 0
	if m.selected >= listH {
		first = m.selected - listH + 1
	}
	var lines []string
	for i := first; i < len(m.rows) && i < first+listH; i++ {
		lines = append(lines, m.rowView(i))
	}
	if listH < h {
		lines = append(lines, "")
		lines = append(lines, notes...)
	}
	return strings.Join(lines, "\n")
}

// rowView renders one check: cursor, badge or spinner, ID, and the title
// (or, for a skip, the reason).
func (m *Model) rowView(i int) string {
	r := m.rows[i]
	cursor, id := "  ", m.styles.ID.Render(fmt.Sprintf("%-*s", idWidth, r.id))
	if i == m.selected {
		cursor, id = m.styles.Cursor.Render("› "), m.styles.Selected.Render(fmt.Sprintf("%-*s", idWidth, r.id))
	}
	badge := m.statusCell(r.status)
	room := m.width - 2 - badgeWidth - idWidth
	text := m.styles.Subtle.Render(truncate(r.title, room))
	switch {
	case r.done && r.status == doctor.StatusSkip && r.result.Explanation != "":
		text = m.styles.Subtle.Render(truncate("skipped: "+firstLine(r.result.Explanation), room))
	case r.done && r.status != doctor.StatusPass:
		text = truncate(r.title, room)
	}
	return cursor + badge + id + text
}

// statusCell is the spinner for a running check, else its badge.
func (m *Model) statusCell(st doctor.Status) string {
	if st == doctor.StatusRunning {
		return lipgloss.NewStyle().Width(badgeWidth).Render(m.spinner.View())
	}
	return m.styles.badge(st)
}

// noteLines are the caller's notes, one truncated line each.
func (m *Model) noteLines() []string {
	var out []string
	for _, n := range m.opts.Notes {
		out = append(out, m.styles.Subtle.Render(truncate("note: "+n, m.width)))
	}
	return out
}

// summary counts the outcomes, or says how many checks are still running.
func (m *Model) summary() string {
	counts := map[doctor.Status]int{}
	for _, r := range m.rows {
		counts[r.status]++
	}
	var parts []string
	if n := counts[doctor.StatusRunning]; n > 0 {
		parts = append(parts, fmt.Sprintf("%d running", n))
	}
	for _, st := range []doctor.Status{doctor.StatusPass, doctor.StatusWarn, doctor.StatusFail, doctor.StatusError, doctor.StatusSkip} {
		if counts[st] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[st], st))
		}
	}
	return m.styles.Subtle.Render(truncate(fmt.Sprintf("%d checks: %s", len(m.rows), strings.Join(parts, ", ")), m.width))
}

// detailContent renders a check's details for the viewport: status,
// evidence, explanation and fix, wrapped to the width.
func (m *Model) detailContent(r row) string {
	w := max(20, m.width-2)
	wrap := func(s string) string { return lipgloss.NewStyle().Width(w).Render(s) }
	indent := func(s string) string {
		return "  " + strings.ReplaceAll(s, "\n", "\n  ")
	}
	var b strings.Builder
	status := r.status
	fmt.Fprintf(&b, "%s%s\n", m.statusCell(status), m.styles.Bold.Render(r.title))
	if !r.done {
		if status == doctor.StatusRunning {
			b.WriteString("\n" + m.styles.Subtle.Render("running…") + "\n")
		} else {
			b.WriteString("\n" + m.styles.Subtle.Render("not run yet") + "\n")
		}
		return b.String()
	}
	if r.result.Duration > 0 {
		b.WriteString(m.styles.Subtle.Render(fmt.Sprintf("took %s", r.result.Duration.Round(1e6))) + "\n")
	}
	if len(r.result.Evidence) > 0 {
		b.WriteString("\n" + m.styles.Bold.Render("Evidence") + "\n")
		for _, e := range r.result.Evidence {
			wrapped := lipgloss.NewStyle().Width(w - 4).Render(strings.TrimRight(e, "\n"))
			b.WriteString("  - " + strings.ReplaceAll(wrapped, "\n", "\n    ") + "\n")
		}
	}
	if r.result.Explanation != "" {
		label := "Why"
		if status == doctor.StatusSkip {
			label = "Skipped because"
		}
		b.WriteString("\n" + m.styles.Bold.Render(label) + "\n" + indent(wrap(r.result.Explanation)) + "\n")
	}
	if r.result.Fix != "" {
		b.WriteString("\n" + m.styles.Bold.Render("Fix") + "\n" + indent(wrap(r.result.Fix)) + "\n")
	}
	if status == doctor.StatusPass && len(r.result.Evidence) == 0 {
		b.WriteString("\n" + m.styles.Subtle.Render("nothing wrong found") + "\n")
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

// truncateLines cuts every line of s to the width.
func (m *Model) truncateLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = ansi.Truncate(l, m.width, "…")
	}
	return strings.Join(lines, "\n")
}

// truncate cuts plain text to n cells with an ellipsis.
func truncate(s string, n int) string {
	if n <= 0 {
		return ""
	}
	return ansi.Truncate(s, n, "…")
}

// firstLine is s up to its first newline.
func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// padLines pads or cuts s to exactly n lines.
func padLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	for len(lines) < n {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}
