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
