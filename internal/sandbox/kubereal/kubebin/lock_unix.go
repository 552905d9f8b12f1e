//go:build unix

package kubebin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// lockDir takes an exclusive lock on path (flock), waiting for another
// process's build to finish; ctx bounds the wait. The holder writes its
// PID into the file, and waiting is called once, with it, when the lock
// is held by another process.
func lockDir(ctx context.Context, path string, waiting func(pid int)) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock the sandbox's Kubernetes build (%s): %w", path, err)
	}

	told := false

	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			// Tell waiters who builds.
			if f.Truncate(0) == nil {
				_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
			}

			return func() {
				_ = f.Truncate(0)
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				_ = f.Close()
			}, nil
		}

		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			_ = f.Close()

			return nil, fmt.Errorf("lock the sandbox's Kubernetes build (%s): %w", path, err)
		}

		if !told && waiting != nil {
			told = true
			b, _ := os.ReadFile(path)
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			waiting(pid)
		}

		select {
		case <-ctx.Done():
			_ = f.Close()

			return nil, fmt.Errorf("wait for another process building the sandbox's Kubernetes binaries (lock %s): %w", path, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// inGroup puts the command and every process it starts into a process
// group of their own, killed as one when the command's context ends.
func inGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = 10 * time.Second
}

// killGroup kills what is left of the command's process group: the
// compile and link processes of a go build killed mid-way.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
