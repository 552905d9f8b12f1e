//go:build linux

package theme

import (
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestAskRawIsBoundedOnASilentTerminal asks a real pseudo-terminal that
// never answers: the wait ends at the timeout. (With File.Fd the file goes
// to blocking mode and the read deadline no longer ends the read.)
func TestAskRawIsBoundedOnASilentTerminal(t *testing.T) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	defer m.Close()
	rc, err := m.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var ierr error
	_ = rc.Control(func(fd uintptr) {
		if ierr = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0); ierr == nil {
			n, ierr = unix.IoctlGetInt(int(fd), unix.TIOCGPTN)
		}
	})
	if ierr != nil {
		t.Fatalf("set up the pty: %v", ierr)
	}
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	go func() { // drain the query, answer nothing
		buf := make([]byte, 256)
		for {
			if _, err := m.Read(buf); err != nil {
				return
			}
		}
	}()
	done := make(chan bool, 1)
	start := time.Now()
	go func() { _, ok := askRaw(tty, 200*time.Millisecond); done <- ok }()
	select {
	case ok := <-done:
		if ok {
			t.Error("a silent terminal reported a background colour")
		}
		if el := time.Since(start); el > 2*time.Second {
			t.Errorf("the 200ms query took %s", el)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("askRaw still waits after 5s on a terminal that answers nothing: the read deadline does not hold")
	}
}
