package kubebin

import (
	"fmt"
	"strings"
	"time"
)

// State is where a build, or one program of it, stands.
type State int

// The states, in the order a build goes through them.
const (
	// Checking: looking for usable binaries (the cache's stamp, the
	// directories named by OHMYTALOS_KUBE_BIN_DIR or KUBEBUILDER_ASSETS).
	Checking State = iota
	// Waiting: another process holds the build lock (Status.HolderPID).
	Waiting
	// Resolving: go list is reading the module graph (and downloading
	// modules on a fresh machine) to count the packages to compile.
	Resolving
	// Building: go build runs (Program.Compiled of Program.Packages).
	Building
	// Ready: the binaries are there; Wait returns them.
	Ready
	// Failed: Status.Err says why.
	Failed
)

func (s State) String() string {
	return [...]string{"checking", "waiting", "resolving", "building", "ready", "failed"}[s]
}

// Program is one binary's part of a build.
type Program struct {
	Name, Version string
	// From says where a binary that is not built comes from: "cache",
	// or the variable that named its directory.
	From string
	// Built is true once the binary is in place (built or reused).
	Built bool
	// Compiled counts the packages go build has compiled for it so far
	// (go build -v), of Packages (its dependencies and itself, go list
	// -deps); both are 0 until the build starts. Packages the Go build
	// cache already holds are not compiled again, so a warm build ends
	// before Compiled reaches Packages.
	Compiled, Packages int
	// Started is when its go build began (zero until then); Elapsed is
	// the time since, or the build's time once Built.
	Started time.Time
	Elapsed time.Duration
	// Expected is how long its cold build takes on two idle cores
	// (measured, see programs).
	Expected time.Duration
}

// Fraction is how far along the program's build is, from 0 to 1.
func (p Program) Fraction() float64 {
	switch {
	case p.Built:
		return 1
	case p.Packages == 0:
		return 0
	}

	// The link comes after the last compile: keep a little for it.
	return 0.95 * float64(p.Compiled) / float64(p.Packages)
}

// Line is the program's progress in words, e.g. "kube-apiserver
// v1.36.3: 812 of 1904 packages, 2m10s of about 6m".
func (p Program) Line() string {
	switch {
	case p.Built && p.From != "":
		return fmt.Sprintf("%s %s: from %s", p.Name, p.Version, p.From)
	case p.Built:
		return fmt.Sprintf("%s %s: built in %s", p.Name, p.Version, p.Elapsed.Round(time.Second))
	case p.Started.IsZero():
		return fmt.Sprintf("%s %s: to build (about %s)", p.Name, p.Version, roundMinutes(p.Expected))
	case p.Packages > 0 && p.Compiled >= p.Packages:
		return fmt.Sprintf("%s %s: linking, %s of about %s", p.Name, p.Version, p.Elapsed.Round(time.Second), roundMinutes(p.Expected))
	}

	return fmt.Sprintf("%s %s: %d of %d packages, %s of about %s", p.Name, p.Version, p.Compiled, p.Packages,
		p.Elapsed.Round(time.Second), roundMinutes(p.Expected))
}

// Status is a build at one moment.
type Status struct {
	State State
	// HolderPID is the process building while this one waits (Waiting;
	// 0 when the lock file does not say).
	HolderPID int
	// Dir is the cache directory the binaries are built into.
	Dir      string
	Programs []Program
	// Err is why the build failed (Failed).
	Err error
}

// Headline is the build's state in one line, e.g. "waiting for PID 4242,
// which is building the sandbox's Kubernetes binaries".
func (s Status) Headline() string {
	switch s.State {
	case Checking:
		return "checking the sandbox's Kubernetes binaries"
	case Waiting:
		if s.HolderPID > 0 {
			return fmt.Sprintf("waiting for PID %d, which is building the sandbox's Kubernetes binaries into %s", s.HolderPID, s.Dir)
		}

		return "waiting for another process building the sandbox's Kubernetes binaries into " + s.Dir
	case Resolving:
		return "resolving the Kubernetes and etcd modules (downloading them on a fresh machine)"
	case Building:
		return "building the sandbox's Kubernetes control plane (first run; the wizard works meanwhile)"
	case Ready:
		return "the sandbox's Kubernetes control plane is ready"
	}

	return fmt.Sprintf("the sandbox's Kubernetes build failed: %v", s.Err)
}

func roundMinutes(d time.Duration) string {
	if d < time.Minute {
		return d.Round(5 * time.Second).String()
	}

	s := d.Round(30 * time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}

	return s
}

// Fraction is how far along the whole build is, from 0 to 1: the mean of
// the programs' fractions.
func (s Status) Fraction() float64 {
	if s.State == Ready {
		return 1
	}

	if len(s.Programs) == 0 {
		return 0
	}

	sum := 0.0
	for _, p := range s.Programs {
		sum += p.Fraction()
	}

	return sum / float64(len(s.Programs))
}

// Summary is the build in one line: the state and, while building, each
// program's share and the longest elapsed and expected times, e.g.
// "building: etcd done, kube-apiserver 41%, ...; 2m10s of about 6m".
func (s Status) Summary() string {
	if s.State != Building {
		return s.Headline()
	}

	var parts []string

	var elapsed, expected time.Duration

	for _, p := range s.Programs {
		if p.Built {
			parts = append(parts, p.Name+" done")

			continue
		}

		parts = append(parts, fmt.Sprintf("%s %d%%", p.Name, int(100*p.Fraction())))
		elapsed, expected = max(elapsed, p.Elapsed), max(expected, p.Expected)
	}

	return fmt.Sprintf("building %s; %s of about %s", strings.Join(parts, ", "), elapsed.Round(time.Second), roundMinutes(expected))
}
