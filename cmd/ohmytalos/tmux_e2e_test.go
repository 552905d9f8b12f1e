package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// tmuxSession drives the built binary in a detached tmux session on a
// private socket, like an operator at a 120x40 terminal.
type tmuxSession struct {
	t      *testing.T
	socket string
	name   string
}

func (s *tmuxSession) tmux(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", s.socket}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (s *tmuxSession) screen() string { return s.tmux("capture-pane", "-p", "-t", s.name) }

func (s *tmuxSession) keys(keys ...string) {
	s.t.Helper()
	s.tmux(append([]string{"send-keys", "-t", s.name}, keys...)...)
}

// waitFor polls the screen until it shows want.
func (s *tmuxSession) waitFor(want string, timeout time.Duration) string {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		scr := s.screen()
		if strings.Contains(scr, want) {
			return scr
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("screen never showed %q within %s; last screen:\n%s", want, timeout, scr)
		}
		time.Sleep(150 * time.Millisecond)
	}
}

// press sends key and waits until the screen shows want.
func (s *tmuxSession) press(key, want string, timeout time.Duration) string {
	s.t.Helper()
	s.keys(key)
	return s.waitFor(want, timeout)
}

// confirm waits for the confirm box, answers yes and waits until the
// screen shows want.
func (s *tmuxSession) confirm(want string, timeout time.Duration) string {
	s.t.Helper()
	s.waitFor("y yes", 30*time.Second)
	return s.press("y", want, timeout)
}

var totalRe = regexp.MustCompile(`total EUR/month\s+([0-9.]+)`)

func total(t *testing.T, scr string) float64 {
	t.Helper()
	m := totalRe.FindStringSubmatch(scr)
	if m == nil {
		t.Fatalf("no total on screen:\n%s", scr)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

// TestInitSandboxInTmux builds the binary and walks the wizard from
// welcome to done against the in-process sandbox.
func TestInitSandboxInTmux(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run in tmux: skipped with -short")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed (.ci/run installs it)")
	}
	dir, bin, work := builtCLI(t)
	s := &tmuxSession{t: t, socket: fmt.Sprintf("ohmytalos-e2e-%d", os.Getpid()), name: "wizard"}
	cmd := fmt.Sprintf("cd %s && OHMYTALOS_AGE_KEY_FILE=%s/age.key HCLOUD_TOKEN= TERM=xterm-256color %s init --sandbox; echo EXITED $?; sleep 600",
		work, dir, bin)
	start := time.Now()
	s.tmux("new-session", "-d", "-s", s.name, "-x", "120", "-y", "40", cmd)
	t.Cleanup(func() { exec.Command("tmux", "-L", s.socket, "kill-server").Run() })

	scr := s.waitFor("the ohmytalos wizard", 30*time.Second)
	t.Logf("first frame after %s (process start to welcome screen)", time.Since(start).Round(time.Millisecond))
	for _, want := range []string{"SANDBOX", "Cluster demo", "Nothing is created on Hetzner"} {
		if !strings.Contains(scr, want) {
			t.Errorf("welcome lacks %q", want)
		}
	}
	s.press("Enter", "Hetzner Cloud API token", 30*time.Second)
	scr = s.press("Enter", "token found and checked", 30*time.Second)
	if regexp.MustCompile(`[0-9a-f]{64}`).MatchString(scr) {
		t.Errorf("the sandbox's 64-character token is on screen:\n%s", scr)
	}
	s.press("Enter", "Talos images", 30*time.Second)
	s.waitFor("siderolabs/tailscale", 30*time.Second)
	s.keys("Enter")
	s.confirm("snapshots ready", 240*time.Second)
	s.press("Enter", "Network layout", 30*time.Second)
	s.press("C-n", "Node pools", 30*time.Second)
	scr = s.waitFor("total EUR/month", 60*time.Second)
	before := total(t, scr)
	s.keys("Down", "+")
	deadline := time.Now().Add(10 * time.Second)
	after := before
	for after == before && time.Now().Before(deadline) {
		time.Sleep(150 * time.Millisecond)
		after = total(t, s.screen())
	}
	if after <= before {
		t.Fatalf("adding a worker did not raise the cost: %.2f -> %.2f", before, after)
	}
	t.Logf("monthly cost %.2f -> %.2f EUR after one more worker", before, after)
	s.press("Enter", "what apply will do", 60*time.Second)
	s.waitFor("s save spec", 60*time.Second)
	// Saving waits for the pre-flight's findings, as an operator would
	// (on a busy machine they can come after the screen): press s again
	// while the screen says the pre-flight is still checking.
	for deadline := time.Now().Add(60 * time.Second); ; {
		scr := s.press("s", "", 0)
		for !strings.Contains(scr, "y yes") && !strings.Contains(scr, "still checking") && time.Now().Before(deadline) {
			time.Sleep(150 * time.Millisecond)
			scr = s.screen()
		}
		if strings.Contains(scr, "y yes") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the save prompt never came within 60 s; last screen:\n%s", scr)
		}
		time.Sleep(500 * time.Millisecond)
	}
	s.confirm("go to bootstrap", 30*time.Second)
	s.press("Enter", "create the cluster", 30*time.Second)
	s.keys("Enter")
	scr = s.confirm("cluster bootstrapped", 300*time.Second)
	for _, want := range []string{"✓ servers", "✓ bootstrap"} {
		if !strings.Contains(scr, want) {
			t.Errorf("bootstrap screen lacks %q:\n%s", want, scr)
		}
	}
	scr = s.press("Enter", "is up", 30*time.Second)
	if !strings.Contains(scr, "kubeconfig") {
		t.Errorf("done screen does not say where the kubeconfig is:\n%s", scr)
	}
	// The doctor runs on the new cluster from the done screen.
	scr = s.press("d", "PASS  vip-claimed", 180*time.Second)
	// lb-targets: with the ingress add-on on (the seed's default) init
	// installs Traefik's release, the cloud controller targets the nodes
	// for its Service, and init waits until they pass their health
	// checks (issue 20's "done when").
	for _, want := range []string{"PASS  vip-link", "PASS  lb-owners", "PASS  provider-id", "PASS  lb-targets"} {
		if !strings.Contains(s.waitFor(want, 120*time.Second), want) {
			t.Errorf("doctor screen lacks %q", want)
		}
	}
	s.press("q", "is up", 30*time.Second)
	s.press("Enter", "EXITED 0", 60*time.Second)

	b, err := os.ReadFile(filepath.Join(work, "ohmytalos.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "count: 3") {
		t.Errorf("spec does not hold the third worker:\n%s", b)
	}
	if _, err := os.Stat(filepath.Join(work, ".ohmytalos", ".sandbox", "demo", "secrets", "kubeconfig.age")); err != nil {
		t.Errorf("kubeconfig not stored: %v", err)
	}
}
