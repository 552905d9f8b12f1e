//go:build unix

package kubebin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// lockDir takes an exclusive lock on path (flock), waiting for another
// process's build to finish; ctx bounds the wait.
func lockDir(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock the sandbox's Kubernetes build (%s): %w", path, err)
	}

	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				_ = f.Close()
			}, nil
		}

		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			_ = f.Close()

			return nil, fmt.Errorf("lock the sandbox's Kubernetes build (%s): %w", path, err)
		}

		select {
		case <-ctx.Done():
			_ = f.Close()

			return nil, fmt.Errorf("wait for another process building the sandbox's Kubernetes binaries (lock %s): %w", path, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
