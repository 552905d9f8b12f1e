package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/engine"
)

// builtBinary is cmd/ohmytalos built once for the tests that use it at
// the same time: each go build links a new 150 MB binary, 10 s and more of
// the CPU the parallel tests share. The last user's cleanup removes it.
var builtBinary struct {
	sync.Mutex
	dir, bin string
	users    int
}

// buildBinary builds cmd/ohmytalos into a temp dir, or hands out the one
// built for a test still running.
func buildBinary(t *testing.T) string {
	t.Helper()
	b := &builtBinary
	b.Lock()
	defer b.Unlock()
	if b.bin == "" {
		dir, err := os.MkdirTemp("", "ohmytalos-e2e-bin-")
		if err != nil {
			t.Fatal(err)
		}
		bin := filepath.Join(dir, "ohmytalos")
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/ohmytalos/ohmytalos/cmd/ohmytalos")
		if out, err := cmd.CombinedOutput(); err != nil {
			os.RemoveAll(dir)
			t.Fatalf("build ohmytalos: %v\n%s", err, out)
		}
		b.dir, b.bin = dir, bin
	}
	b.users++
	t.Cleanup(func() {
		b.Lock()
		defer b.Unlock()
		if b.users--; b.users == 0 {
			os.RemoveAll(b.dir)
			b.dir, b.bin = "", ""
		}
	})
	return b.bin
}

// standalone is a "ohmytalos sandbox serve" child process.
type standalone struct {
	cmd *exec.Cmd
	// env holds the NAME=value pairs it printed.
	env map[string]string
}

// startServe runs "ohmytalos sandbox serve" on a free loopback port with
// args and waits for its export lines. The process is killed at cleanup.
func startServe(t *testing.T, bin string, args ...string) *standalone {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"sandbox", "serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Dir = t.TempDir()
	cmd.Stderr = io.Discard
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start sandbox serve: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	s := &standalone{cmd: cmd, env: map[string]string{}}
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	want := []string{"HCLOUD_ENDPOINT", "HCLOUD_TOKEN", "OHMYTALOS_FACTORY_URL", "OHMYTALOS_IP_ECHO_URL", "OHMYTALOS_RESCUE_SSH_PORT",
		"OHMYTALOS_BW_SERVE_URL", "OHMYTALOS_BW_ITEM", "OHMYTALOS_CHART_MIRROR"}
	missing := func() bool {
		return slices.ContainsFunc(want, func(k string) bool { return s.env[k] == "" })
	}
	timeout := time.After(30 * time.Second)
	for missing() {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("sandbox serve exited after printing %v (want %v)", s.env, want)
			}
			if kv, ok := strings.CutPrefix(l, "export "); ok {
				if k, v, ok := strings.Cut(kv, "="); ok {
					s.env[k] = v
				}
			}
		case <-timeout:
			t.Fatalf("sandbox serve printed no complete environment within 30s (got %v, want %v)", s.env, want)
		}
	}
	go func() {
		for range lines { // keep draining so the child never blocks
		}
	}()
	return s
}

// environ is the child environment: ours, minus anything that could
// reach a real account, plus the sandbox's.
func (s *standalone) environ(extra ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "HCLOUD_") || strings.HasPrefix(k, "OHMYTALOS_") || strings.HasPrefix(k, "SOPS_AGE") {
			continue
		}
		out = append(out, kv)
	}
	for k, v := range s.env {
		out = append(out, k+"="+v)
	}
	return append(out, extra...)
}

// applyProc is one "ohmytalos apply --json" child.
type applyProc struct {
	cmd  *exec.Cmd
	out  lockedBuffer
	errb lockedBuffer
	done chan struct{}
	err  error
}

// lockedBuffer is a bytes.Buffer safe to read while the child writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startCLI starts bin with args in dir.
func startCLI(t *testing.T, bin, dir string, env []string, args ...string) *applyProc {
	t.Helper()
	p := &applyProc{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	p.cmd.Dir, p.cmd.Env = dir, env
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.errb
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start ohmytalos %v: %v", args, err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	return p
}

// wait waits for the child, killing it after timeout.
func (p *applyProc) wait(timeout time.Duration) error {
	select {
	case <-p.done:
		return p.err
	case <-time.After(timeout):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("still running after %v: killed", timeout)
	}
}

// events parses the --json event lines printed so far; a line cut by a
// kill is skipped.
func (p *applyProc) events() []engine.Event {
	var out []engine.Event
	for _, l := range strings.Split(p.out.String(), "\n") {
		var ev engine.Event
		if json.Unmarshal([]byte(l), &ev) == nil && ev.Kind != "" {
			out = append(out, ev)
		}
	}
	return out
}
