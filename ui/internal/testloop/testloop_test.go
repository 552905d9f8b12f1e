package testloop

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

type (
	countMsg struct{}
	tickMsg  struct{}
)

// counter counts what reaches Update and records whether Update saw
// itself inside Update.
type counter struct {
	counts, views int
	keys          []tea.KeyMsg
	inside        bool
}

func (c *counter) Init() tea.Cmd {
	return tea.Batch(
		func() tea.Msg { return countMsg{} },
		func() tea.Msg { return tickMsg{} },
		func() tea.Msg { return tea.BatchMsg{func() tea.Msg { return countMsg{} }} },
	)
}

func (c *counter) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, c.inside = InUpdateOrView("testloop.(*counter)")
	switch msg := msg.(type) {
	case countMsg:
		c.counts++
	case tickMsg:
		panic("a dropped message reached Update")
	case tea.KeyMsg:
		c.keys = append(c.keys, msg)
		if msg.Type == tea.KeyCtrlC {
			return c, tea.Quit
		}
	}
	return c, nil
}

func (c *counter) View() string { c.views++; return "" }

func TestLoopDeliversBatchesAndDrops(t *testing.T) {
	m := &counter{}
	l := New(t, m, func(msg tea.Msg) bool { _, ok := msg.(tickMsg); return ok })
	l.Run(m.Init())
	l.WaitFor("two counts", func() bool { return m.counts == 2 })
	l.Settle()
	if m.counts != 2 || m.views != 2 {
		t.Errorf("counts %d, views %d; want 2 and 2", m.counts, m.views)
	}
	if !m.inside {
		t.Error("InUpdateOrView does not see Update on the stack")
	}
	if _, inside := InUpdateOrView("testloop.(*counter)"); inside {
		t.Error("InUpdateOrView reports Update outside of it")
	}
	if l.Quit() {
		t.Error("Quit before any quit command")
	}
	l.Key("r", "enter", "ctrl+c")
	l.WaitFor("quit", l.Quit)
	if len(m.keys) != 3 || string(m.keys[0].Runes) != "r" || m.keys[1].Type != tea.KeyEnter {
		t.Errorf("keys = %v", m.keys)
	}
}

func TestKeyMsg(t *testing.T) {
	for name, want := range map[string]tea.KeyType{
		"enter": tea.KeyEnter, "shift+tab": tea.KeyShiftTab, "space": tea.KeySpace, "ctrl+n": tea.KeyCtrlN, "backspace": tea.KeyBackspace,
	} {
		if got := KeyMsg(name); got.Type != want {
			t.Errorf("KeyMsg(%q) = %v, want %v", name, got.Type, want)
		}
	}
	if got := KeyMsg("+x"); got.Type != tea.KeyRunes || !strings.EqualFold(string(got.Runes), "+x") {
		t.Errorf("KeyMsg(+x) = %#v, want runes", got)
	}
}
