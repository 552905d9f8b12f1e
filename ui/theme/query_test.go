package theme

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
)

func TestParseBackground(t *testing.T) {
	for _, tc := range []struct {
		in       string
		dark, ok bool
	}{
		{"\x1b]11;rgb:0000/0000/0000\x07\x1b[?62;c", true, true},
		{"\x1b]11;rgb:ffff/ffff/ffff\x1b\\\x1b[?1;2c", false, true},
		{"\x1b]11;rgb:1e/1e/2e\x07", true, true},
		{"\x1b]11;rgb:fdf6/e3e3/c8c8\x07", false, true},
		{"\x1b[?1;2c", false, false}, // DA1 only: no OSC 11 support
		{"\x1b]11;rgb:zz/00/00\x07", false, false},
		{"", false, false},
	} {
		dark, ok := parseBackground(tc.in)
		if dark != tc.dark || ok != tc.ok {
			t.Errorf("parseBackground(%q) = %v, %v; want %v, %v", tc.in, dark, ok, tc.dark, tc.ok)
		}
	}
}

// terminal answers the queries the way answer says, on a pipe with deadlines.
func terminal(t *testing.T, answer string) net.Conn {
	t.Helper()
	ours, theirs := net.Pipe()
	t.Cleanup(func() { ours.Close(); theirs.Close() })
	go func() {
		buf := make([]byte, 64)
		if _, err := theirs.Read(buf); err != nil || answer == "" {
			_, _ = io.Copy(io.Discard, theirs) // a terminal that never answers
			return
		}
		_, _ = theirs.Write([]byte(answer))
	}()
	return ours
}

func TestQueryDarkIsBounded(t *testing.T) {
	start := time.Now()
	_, ok := queryDark(terminal(t, ""), 150*time.Millisecond)
	if ok || time.Since(start) > 2*time.Second {
		t.Errorf("silent terminal: ok = %v after %s; want no answer within the timeout", ok, time.Since(start))
	}
	start = time.Now()
	dark, ok := queryDark(terminal(t, "\x1b]11;rgb:ffff/ffff/ffff\x07\x1b[?62;22c"), 5*time.Second)
	if !ok || dark || time.Since(start) > time.Second {
		t.Errorf("light terminal: dark %v ok %v after %s; want a quick light answer", dark, ok, time.Since(start))
	}
	start = time.Now()
	if _, ok := queryDark(terminal(t, "\x1b[?62;22c"), 5*time.Second); ok || time.Since(start) > time.Second {
		t.Errorf("terminal without OSC 11: ok %v after %s; want the DA1 answer to end the wait", ok, time.Since(start))
	}
}

func TestPrepareNoColorAsksNothing(t *testing.T) {
	r := lipgloss.NewRenderer(io.Discard)
	start := time.Now()
	Prepare(r, true, time.Hour)
	if time.Since(start) > time.Second || !r.HasDarkBackground() {
		t.Errorf("Prepare under NO_COLOR took %s or set a light background", time.Since(start))
	}
}
