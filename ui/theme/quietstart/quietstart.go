// Package quietstart keeps an import-time terminal query from holding the
// program's start on a terminal that never answers.
//
// bubbletea v1.3.10 asks the terminal for its background colour when the
// package is initialised (tea_init.go: lipgloss.HasDarkBackground(), "will
// be removed in v2"), through termenv v0.16.0, which waits for the answer
// up to its OSCTimeout, a 5 s constant (termenv_unix.go termStatusReport,
// readNextByte). termenv skips the query when TERM starts with "dumb",
// "screen" or "tmux". So this package, which imports nothing but the
// standard library and is therefore initialised before
// golang.org/x/sys, termenv, lipgloss and bubbletea (the Go spec's package
// initialisation order: the ready package with the smallest import path
// first, and github.com/... sorts before golang.org/...), sets TERM to
// "dumb" for the duration of the other packages' initialisation. main
// calls Restore first thing, and ui/theme.Prepare then asks the terminal
// once, with a bound, for every renderer.
package quietstart

import "os"

// term is TERM as the program was started with it.
var term, hadTerm = os.LookupEnv("TERM")

func init() {
	_ = os.Setenv("TERM", "dumb")
}

// Restore puts TERM back as the program was started. It must run before
// anything reads the colour profile from the environment: first in main.
func Restore() {
	if hadTerm {
		_ = os.Setenv("TERM", term)
		return
	}
	_ = os.Unsetenv("TERM")
}
