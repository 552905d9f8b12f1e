//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair (/dev/ptmx, unlocked, its
// /dev/pts/N) sized 120x40.
func openPTY(t testing.TB) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock the pty: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("pty number: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open the pty's terminal: %v", err)
	}
	if err := unix.IoctlSetWinsize(int(s.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: 120}); err != nil {
		t.Fatalf("size the pty: %v", err)
	}
	return m, s
}

// silentTerminal collects what the program writes and answers nothing:
// no background colour (OSC 11), no device attributes (DA1), no cursor
// position (DSR).
type silentTerminal struct {
	mu  sync.Mutex
	out bytes.Buffer
}

func (s *silentTerminal) drain(m *os.File) {
	buf := make([]byte, 64<<10)
	for {
		n, err := m.Read(buf)
		s.mu.Lock()
		s.out.Write(buf[:n])
		s.mu.Unlock()
		if err != nil {
			return
		}
	}
}

func (s *silentTerminal) written() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

// TestFirstFrameInATerminalThatAnswersNothing runs the built binary's
// wizard in a pty that answers no query: the first frame comes within the
// bound of the one query left (ui/theme.QueryTimeout), not after termenv's
// 5 s per query or never, and the libraries' own queries are not sent.
func TestFirstFrameInATerminalThatAnswersNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary: skipped with -short")
	}
	dir, bin, work := builtCLI(t)
	master, slave := openPTY(t)
	defer master.Close()
	cmd := exec.Command(bin, "init", "--sandbox")
	cmd.Dir = work
	// An operator's terminal, not CI's: termenv takes any CI variable to
	// mean "no terminal" and drops colour (termenv v0.16.0 termenv.go isTTY).
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "CI=") })
	cmd.Env = append(env, "TERM=xterm-256color", "HCLOUD_TOKEN=", "OHMYTALOS_AGE_KEY_FILE="+filepath.Join(dir, "age.key"))
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	term := &silentTerminal{}
	go term.drain(master)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = slave.Close()
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	const bound = 5 * time.Second
	for !strings.Contains(ansi.Strip(term.written()), "the ohmytalos wizard") {
		if time.Since(start) > bound {
			t.Fatalf("no first frame within %s in a terminal that answers nothing; written so far: %q", bound, term.written())
		}
		time.Sleep(10 * time.Millisecond)
	}
	took := time.Since(start)
	t.Logf("first frame after %s in a terminal that answers nothing", took.Round(time.Millisecond))
	out := term.written()
	if n := strings.Count(out, "\x1b]11;?"); n != 1 {
		t.Errorf("the background colour was asked %d times, want once (ui/theme.Prepare)", n)
	}
	if strings.Contains(out, "\x1b[6n") {
		t.Errorf("termenv's cursor-position query was sent (its 5 s wait is unbounded by us): %q", out)
	}
	if !strings.Contains(out, "\x1b[38;5;") {
		t.Errorf("the frame has no 256-colour styling: the colour profile was lost on the way: %q", out)
	}
}
