// Package testloop drives a bubbletea model in tests the way bubbletea's
// runtime does: messages go through Update (and View), commands run in
// goroutines and their messages come back through a channel, but the test
// decides when to process them. The wizard (package ui) and the doctor
// screen (package ui/doctorui) share it for their test harnesses.
package testloop

import (
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// wait is how long WaitFor and Settle wait before failing the test.
const wait = 5 * time.Second

// Loop is the message loop of one model under test.
type Loop struct {
	t       testing.TB
	model   tea.Model
	drop    func(tea.Msg) bool
	msgs    chan tea.Msg
	done    chan struct{}
	pending atomic.Int64
	quit    atomic.Bool
}

// New returns the loop of model m (a pointer model: the model Update
// returns is not kept). drop, when not nil, says which messages are never
// delivered (such as timer ticks that only repaint, so frames stay
// deterministic). The loop stops delivering when the test ends; register
// the model's own clean-up after New so it runs first.
func New(t testing.TB, m tea.Model, drop func(tea.Msg) bool) *Loop {
	l := &Loop{t: t, model: m, drop: drop, msgs: make(chan tea.Msg, 256), done: make(chan struct{})}
	t.Cleanup(func() { close(l.done) })
	return l
}

// Run runs cmd in a goroutine and queues what it returns; a batch runs
// each of its commands.
func (l *Loop) Run(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	l.pending.Add(1)
	go func() {
		defer l.pending.Add(-1)
		l.deliver(cmd())
	}()
}

func (l *Loop) deliver(msg tea.Msg) {
	switch m := msg.(type) {
	case nil:
		return
	case tea.BatchMsg:
		for _, c := range m {
			l.Run(c)
		}
		return
	case tea.QuitMsg:
		l.quit.Store(true)
		return
	}
	if l.drop != nil && l.drop(msg) {
		return
	}
	select {
	case l.msgs <- msg:
	case <-l.done:
	}
}

// Send runs msg through Update and View and runs the returned command.
func (l *Loop) Send(msg tea.Msg) {
	_, cmd := l.model.Update(msg)
	_ = l.model.View()
	l.Run(cmd)
}

// Key sends keys by name (see KeyMsg).
func (l *Loop) Key(names ...string) {
	for _, n := range names {
		l.Send(KeyMsg(n))
	}
}

// Quit reports whether a command returned tea.QuitMsg.
func (l *Loop) Quit() bool { return l.quit.Load() }

// WaitFor processes queued messages until cond holds, failing the test
// after five seconds.
func (l *Loop) WaitFor(what string, cond func() bool) {
	l.t.Helper()
	deadline := time.After(wait)
	for !cond() {
		select {
		case msg := <-l.msgs:
			l.Send(msg)
		case <-time.After(2 * time.Millisecond):
			// cond may depend on a goroutine or on a command's result
			// that is no message (tea.QuitMsg): look again.
		case <-deadline:
			l.t.Fatalf("timed out waiting for %s; screen:\n%s", what, l.model.View())
		}
	}
}

// Settle processes messages until no command is pending.
func (l *Loop) Settle() {
	l.t.Helper()
	deadline := time.After(wait)
	for {
		select {
		case msg := <-l.msgs:
			l.Send(msg)
			continue
		default:
		}
		if l.pending.Load() == 0 && len(l.msgs) == 0 {
			return
		}
		select {
		case msg := <-l.msgs:
			l.Send(msg)
		case <-time.After(2 * time.Millisecond):
		case <-deadline:
			l.t.Fatalf("commands still pending after %s", wait)
		}
	}
}

// KeyMsg is the key message of a key name: "enter", "tab", "shift+tab",
// "esc", "up", "down", "left", "right", "ctrl+n", "ctrl+p", "ctrl+c",
// "backspace", "space"; any other name is typed as runes ("r", "+").
func KeyMsg(name string) tea.KeyMsg {
	special := map[string]tea.KeyType{
		"enter": tea.KeyEnter, "tab": tea.KeyTab, "shift+tab": tea.KeyShiftTab, "esc": tea.KeyEsc,
		"up": tea.KeyUp, "down": tea.KeyDown, "left": tea.KeyLeft, "right": tea.KeyRight,
		"ctrl+n": tea.KeyCtrlN, "ctrl+p": tea.KeyCtrlP, "ctrl+c": tea.KeyCtrlC, "backspace": tea.KeyBackspace,
		"space": tea.KeySpace,
	}
	if k, ok := special[name]; ok {
		return tea.KeyMsg{Type: k}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(name)}
}

// InUpdateOrView reports whether the calling goroutine runs inside the
// Update or View method of model, named as in a stack trace ("ui.(*Model)"),
// and returns the stack to show: I/O there would block the UI, it must run
// in a tea.Cmd.
func InUpdateOrView(model string) (stack string, inside bool) {
	buf := make([]byte, 64<<10)
	stack = string(buf[:runtime.Stack(buf, false)])
	return stack, strings.Contains(stack, model+".Update") || strings.Contains(stack, model+".View")
}
