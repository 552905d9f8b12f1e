package theme

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/term"
	"github.com/muesli/termenv"
)

// QueryTimeout bounds the wait for the terminal's answer in Prepare. A
// terminal that answers at all answers within milliseconds; one that does
// not would otherwise hold the first frame for termenv's 5 s (OSCTimeout
// in termenv v0.16.0 termenv_unix.go).
const QueryTimeout = 500 * time.Millisecond

// OnTerminal reports whether stdin and stdout are both terminals, as a
// full-screen program needs them.
func OnTerminal() bool {
	return term.IsTerminal(os.Stdin.Fd()) && term.IsTerminal(os.Stdout.Fd())
}

// ForStdout prepares r (a new renderer on stdout when r is nil) with
// Prepare and QueryTimeout, before a full-screen program reads the
// terminal, and returns it.
func ForStdout(r *lipgloss.Renderer, noColor bool) *lipgloss.Renderer {
	if r == nil {
		r = lipgloss.NewRenderer(os.Stdout)
	}
	Prepare(r, noColor, QueryTimeout)
	return r
}

// Prepare settles what r would otherwise ask the terminal lazily, from the
// first View, while bubbletea reads the same terminal: the colour profile
// (from the environment) and whether the background is dark. Under noColor
// nothing is asked. Else the background is asked once on the controlling
// terminal, waiting at most timeout; without an answer the background is
// taken as dark, as termenv does.
func Prepare(r *lipgloss.Renderer, noColor bool, timeout time.Duration) {
	if noColor {
		r.SetColorProfile(termenv.Ascii)
		r.SetHasDarkBackground(true)
		return
	}
	r.ColorProfile() // environment only: TERM, COLORTERM, NO_COLOR
	// termenv's default output took its profile when TERM may have been
	// hidden (package quietstart): take it again from the environment.
	if o := termenv.DefaultOutput(); o != nil {
		o.Profile = o.EnvColorProfile()
	}
	dark := true
	if tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0); err == nil {
		if d, ok := askRaw(tty, timeout); ok {
			dark = d
		}
		_ = tty.Close()
	}
	r.SetHasDarkBackground(dark)
	// Components that style with the package's default renderer (bubbles'
	// defaults) get the same answer instead of asking again.
	lipgloss.DefaultRenderer().SetHasDarkBackground(dark)
}

// askRaw puts the terminal in raw mode and asks. The descriptor is reached
// through SyscallConn, never File.Fd: Fd switches the file to blocking
// mode (os.File.Fd's documentation), after which the read deadline no
// longer stops a read, and a terminal that never answers holds it forever.
func askRaw(tty *os.File, timeout time.Duration) (dark, ok bool) {
	rc, err := tty.SyscallConn()
	if err != nil {
		return false, false
	}
	var st *term.State
	if err := rc.Control(func(fd uintptr) { st, err = term.MakeRaw(fd) }); err != nil || st == nil {
		return false, false
	}
	defer func() { _ = rc.Control(func(fd uintptr) { _ = term.Restore(fd, st) }) }()
	return queryDark(tty, timeout)
}

// deadlineReadWriter is a terminal that can stop a read at a deadline.
type deadlineReadWriter interface {
	io.ReadWriter
	SetReadDeadline(time.Time) error
}

// queryDark asks for the background colour (OSC 11) followed by the
// primary device attributes (DA1), which every terminal answers: the DA1
// answer ends the wait early on a terminal without OSC 11. It reports
// whether the background is dark, and whether the terminal said.
func queryDark(t deadlineReadWriter, timeout time.Duration) (dark, ok bool) {
	if err := t.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return false, false // cannot bound the wait: do not ask at all
	}
	defer func() { _ = t.SetReadDeadline(time.Time{}) }()
	if _, err := io.WriteString(t, "\x1b]11;?\x07\x1b[c"); err != nil {
		return false, false
	}
	var got []byte
	buf := make([]byte, 256)
	for !bytes.Contains(got, []byte("\x1b[?")) || !endsDA1(got) {
		n, err := t.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			break
		}
	}
	return parseBackground(string(got))
}

// endsDA1 reports whether the DA1 answer (ESC [ ? ... c) is complete.
func endsDA1(b []byte) bool {
	i := bytes.LastIndex(b, []byte("\x1b[?"))
	return i >= 0 && bytes.IndexByte(b[i:], 'c') >= 0
}

// parseBackground reads an OSC 11 answer, "ESC ] 11 ; rgb:RRRR/GGGG/BBBB"
// ended by BEL or ESC \, and reports whether that colour is dark.
func parseBackground(s string) (dark, ok bool) {
	_, rest, found := strings.Cut(s, "\x1b]11;rgb:")
	if !found {
		return false, false
	}
	if end := strings.IndexAny(rest, "\x07\x1b"); end >= 0 {
		rest = rest[:end]
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 3 {
		return false, false
	}
	var rgb [3]float64
	for i, p := range parts {
		if p == "" || len(p) > 4 {
			return false, false
		}
		v, err := strconv.ParseUint(p, 16, 16)
		if err != nil {
			return false, false
		}
		rgb[i] = float64(v) / float64(uint64(1)<<(4*len(p))-1)
	}
	// Relative luminance (ITU-R BT.709 weights).
	l := 0.2126*rgb[0] + 0.7152*rgb[1] + 0.0722*rgb[2]
	return l < 0.5, true
}
