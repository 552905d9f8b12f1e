//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
)

// answeringTerminal is an operator's terminal on a pty: it answers the
// background colour (OSC 11) and device attributes (DA1) queries at once,
// and says when the wizard's first frame has been drawn.
func answeringTerminal(m *os.File, frame chan<- struct{}) {
	var out []byte
	buf := make([]byte, 64<<10)
	drawn := false
	for {
		n, err := m.Read(buf)
		out = append(out, buf[:n]...)
		if bytes.Contains(buf[:n], []byte("\x1b]11;?")) {
			_, _ = m.WriteString("\x1b]11;rgb:1c1c/1c1c/1c1c\x07\x1b[?62;22c")
		}
		if !drawn && strings.Contains(ansi.Strip(string(out)), "the ohmytalos wizard") {
			drawn = true
			close(frame)
		}
		if err != nil {
			return
		}
	}
}

// BenchmarkFirstFrame runs the built binary's wizard (init --sandbox) in
// a pty that answers its queries, and reports the median time from the
// process's start to its first frame: with the sandbox's Kubernetes
// binaries in the cache (warm), and with an empty cache, where their
// build starts in the background (each run is stopped after its frame).
func BenchmarkFirstFrame(b *testing.B) {
	dir, bin, _ := builtCLI(b)
	for _, c := range []struct {
		name string
		env  func(run string) []string
	}{
		{"warm-cache", func(string) []string { return nil }},
		{"empty-cache", func(run string) []string {
			// A new user's: no binaries and no Go build cache (GOCACHE
			// defaults to XDG_CACHE_HOME/go-build).
			return []string{"XDG_CACHE_HOME=" + filepath.Join(run, "cache")}
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var took []time.Duration
			for i := 0; i < b.N; i++ {
				took = append(took, firstFrame(b, bin, dir, c.env))
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "first-frame-ms")
			b.ReportMetric(float64(took[len(took)-1].Microseconds())/1000, "max-ms")
			b.ReportMetric(0, "ns/op")
		})
	}
}

func firstFrame(b *testing.B, bin, dir string, env func(run string) []string) time.Duration {
	b.Helper()
	run := b.TempDir()
	master, slave := openPTY(b)
	defer master.Close()
	cmd := exec.Command(bin, "init", "--sandbox")
	cmd.Dir = run
	base := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "CI=") })
	cmd.Env = append(append(base, "TERM=xterm-256color", "HCLOUD_TOKEN=", "OHMYTALOS_AGE_KEY_FILE="+filepath.Join(dir, "age.key")), env(run)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	frame := make(chan struct{})
	go answeringTerminal(master, frame)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	_ = slave.Close()
	defer func() {
		// ctrl+c, as an operator quits: the build's processes go with it.
		_, _ = master.WriteString("\x03")
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	select {
	case <-frame:
		return time.Since(start)
	case <-time.After(20 * time.Second):
		b.Fatal("no first frame within 20 s")
	}
	return 0
}

// TestEmptyCacheBuildsBesideTheWizard runs init --sandbox as a new user
// would, with an empty cache: the wizard draws its first frame while the
// sandbox's Kubernetes build starts beside it, the screen shows the
// build's progress per binary, and ctrl+c ends the build with the wizard,
// leaving no go, compile or link process behind. The times are
// BenchmarkFirstFrame's to measure; the bounds here only end a hung run.
func TestEmptyCacheBuildsBesideTheWizard(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary, and starts a cold build: skipped with -short")
	}
	dir, bin, work := builtCLI(t)
	cache := filepath.Join(t.TempDir(), "cache")
	master, slave := openPTY(t)
	defer master.Close()
	cmd := exec.Command(bin, "init", "--sandbox")
	cmd.Dir = work
	base := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "CI=") })
	cmd.Env = append(base, "TERM=xterm-256color", "HCLOUD_TOKEN=", "OHMYTALOS_AGE_KEY_FILE="+filepath.Join(dir, "age.key"), "XDG_CACHE_HOME="+cache)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	term := &silentTerminal{}
	go term.drain(master)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = slave.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() { _ = cmd.Process.Kill() }()

	screen := func() string { return ansi.Strip(term.written()) }
	waitScreen := func(what string, bound time.Duration, cond func(string) bool) {
		t.Helper()
		for deadline := time.Now().Add(bound); !cond(screen()); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("no %s within %s; screen so far:\n%s", what, bound, screen())
			}
		}
	}
	waitScreen("first frame", 10*time.Second, func(s string) bool { return strings.Contains(s, "the ohmytalos wizard") })
	waitScreen("build progress per binary", 2*time.Minute, func(s string) bool {
		return strings.Contains(s, "building the sandbox's Kubernetes control plane") &&
			strings.Contains(s, "kube-apiserver v1.36.3:") && strings.Contains(s, "packages,")
	})
	if left := processesUnder(t, cache); len(left) == 0 {
		t.Fatalf("the screen shows a build, but no process runs in %s", cache)
	}

	_, _ = master.WriteString("\x03") // ctrl+c
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Fatal("the wizard did not end within 30 s of ctrl+c")
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		left := processesUnder(t, cache)
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after ctrl+c these build processes still run: %q", left)
		}
	}
}

// processesUnder lists the running processes whose working directory or
// command line is below dir (a zombie does not count).
func processesUnder(t *testing.T, dir string) []string {
	t.Helper()
	procs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range procs {
		stat, err := os.ReadFile(filepath.Join(p, "stat"))
		if _, rest, _ := strings.Cut(string(stat), ") "); err != nil || strings.HasPrefix(rest, "Z") {
			continue
		}
		cwd, _ := os.Readlink(filepath.Join(p, "cwd"))
		args, _ := os.ReadFile(filepath.Join(p, "cmdline"))
		line := strings.ReplaceAll(string(args), "\x00", " ")
		if strings.HasPrefix(cwd, dir) || strings.Contains(line, dir) {
			out = append(out, filepath.Base(p)+": "+line)
		}
	}
	return out
}
