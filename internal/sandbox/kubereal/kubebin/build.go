package kubebin

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// build writes the tools modules into DIR/src and builds ps into DIR/bin:
// one go build per module, both at once. The three Kubernetes programs
// share one invocation, so they share one compile graph and link in
// parallel. Each program's why is said in its progress line ("first
// run", or what is wrong with the binary the cache holds).
func (b *Build) build(ctx context.Context, goBin, dir string, bads []bad) error {
	var ps []program

	whys := map[string]string{}
	for _, p := range bads {
		ps = append(ps, p.program)
		whys[p.name] = p.why
	}

	src := filepath.Join(dir, "src")
	for name, files := range map[string][2][]byte{"kube": {kubeGoMod, kubeGoSum}, "etcd": {etcdGoMod, etcdGoSum}} {
		d := filepath.Join(src, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("prepare the %s tools module: %w", name, err)
		}

		for file, data := range map[string][]byte{"go.mod": files[0], "go.sum": files[1]} {
			if err := writeAtomic(filepath.Join(d, file), data); err != nil {
				return fmt.Errorf("prepare the %s tools module: %w", name, err)
			}
		}
	}

	var groups [][]program

	for _, module := range []string{"kube", "etcd"} {
		var g []program

		for _, p := range ps {
			if p.module == module {
				g = append(g, p)
			}
		}

		if len(g) > 0 {
			groups = append(groups, g)
		}
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	b.update(func(s *Status) { s.State = Resolving })

	deps := make([]map[string][]string, len(groups))
	if err := each(groups, cancel, func(i int, g []program) (err error) {
		deps[i], err = listDeps(ctx, goBin, filepath.Join(src, g[0].module), g)

		return err
	}); err != nil {
		return err
	}

	b.update(func(s *Status) { s.State = Building })

	return each(groups, cancel, func(i int, g []program) error {
		return b.buildGroup(ctx, goBin, dir, filepath.Join(src, g[0].module), g, deps[i], whys)
	})
}

// each runs fn for every group at once; the first error cancels the rest.
func each(groups [][]program, cancel func(), fn func(int, []program) error) error {
	errs := make([]error, len(groups))

	var wg sync.WaitGroup

	for i, g := range groups {
		wg.Go(func() {
			if errs[i] = fn(i, g); errs[i] != nil {
				cancel()
			}
		})
	}

	wg.Wait()

	// A build cancelled because the other failed says only "killed".
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
	}

	return errors.Join(errs...)
}

// listDeps returns, for each program's package, the packages go build
// compiles for it: its dependencies and itself (go list). On a fresh
// machine this downloads the modules.
func listDeps(ctx context.Context, goBin, moduleDir string, ps []program) (map[string][]string, error) {
	args := []string{"list", "-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}"}
	for _, p := range ps {
		args = append(args, p.pkg)
	}

	var stderr bytes.Buffer

	cmd := goCommand(ctx, goBin, moduleDir, args...)
	cmd.Stderr = &stderr

	out, err := cmd.Output()
	if err != nil {
		return nil, goFailed(ctx, "resolve", ps, moduleDir, err, lastLines(stderr.String(), 20))
	}

	deps := map[string][]string{}

	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) > 0 {
			deps[fields[0]] = fields
		}
	}

	return deps, nil
}

// buildGroup runs one go build for programs of one module, counting the
// packages it compiles (go build -v) for each.
func (b *Build) buildGroup(ctx context.Context, goBin, dir, moduleDir string, ps []program, deps map[string][]string, whys map[string]string) error {
	tmp, err := os.MkdirTemp(filepath.Join(dir, "bin"), ".build-")
	if err != nil {
		return unwritable(dir, nil, err)
	}
	defer os.RemoveAll(tmp)

	out := tmp + string(filepath.Separator)
	if len(ps) == 1 {
		// One package: name the file (etcd's package path ends in /v3).
		out = filepath.Join(tmp, ps[0].name)
	}

	// Without the symbol table and DWARF (-s -w), as Kubernetes' release
	// builds link (hack/lib/golang.sh adds -s -w unless DBG=1 since
	// kubernetes/kubernetes#108371): the three links take a third of the time and
	// the binaries 117 MB less (measured: 40 s and 391 MB, 14 s and 274 MB).
	ldflags := "-s -w"
	if ps[0].module == "kube" {
		ldflags += " " + versionLDFlags()
	}
	args := append([]string{"build", "-v", "-trimpath", "-ldflags", ldflags}, fastCompile()...)
	args = append(args, "-o", out)

	// Which programs each package is compiled for.
	usedBy := map[string][]string{}

	for _, p := range ps {
		args = append(args, p.pkg)

		for _, d := range deps[p.pkg] {
			usedBy[d] = append(usedBy[d], p.name)
		}
	}

	start := time.Now()

	for _, p := range ps {
		b.setProgram(p.name, func(s *Program) { s.Started, s.Packages = start, len(deps[p.pkg]) })
		b.progress(fmt.Sprintf("building %s %s (%s, about %s)", p.name, p.version(), whys[p.name], roundMinutes(p.expected)))
	}

	cmd := goCommand(ctx, goBin, moduleDir, args...)
	cmd.Env = append(cmd.Env, compileGOGC()...)

	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}

	if err := cmd.Start(); err != nil {
		return goFailed(ctx, "build", ps, moduleDir, err, "")
	}

	// Read to the end before Wait, which closes the pipe and would lose
	// go's last lines, the ones that say why it failed.
	output := <-b.follow(stderr, ps, usedBy)
	if err := cmd.Wait(); err != nil {
		killGroup(cmd)

		return goFailed(ctx, "build", ps, moduleDir, err, output)
	}

	for _, p := range ps {
		if err := os.Rename(filepath.Join(tmp, p.name), filepath.Join(dir, "bin", p.name)); err != nil {
			return fmt.Errorf("install %s into %s: %w", p.name, filepath.Join(dir, "bin"), err)
		}

		took := time.Since(start)
		b.setProgram(p.name, func(s *Program) { s.Built, s.Elapsed = true, took })
		b.progress(fmt.Sprintf("built %s %s in %s", p.name, p.version(), took.Round(time.Second)))
	}

	return nil
}

// follow reads go build -v's output: each line naming a package counts as
// one compiled for the programs using it; the others are kept, the last
// 20 sent on the returned channel at the end. While it compiles, it
// hands the status on at most four times a second and a progress line
// per program every 30 s.
func (b *Build) follow(r io.Reader, ps []program, usedBy map[string][]string) <-chan string {
	tail := make(chan string, 1)

	go func() {
		var other []string

		counts, seen := map[string]int{}, map[string]bool{}
		lastStatus, lastLine := time.Time{}, time.Now()
		sc := bufio.NewScanner(r)

		for sc.Scan() {
			line := sc.Text()

			pkg := strings.TrimSpace(line)

			users, ok := usedBy[pkg]
			if ok && seen[pkg] {
				continue
			}

			if !ok {
				other = append(other, line)
				if len(other) > 20 {
					other = other[1:]
				}

				continue
			}

			seen[pkg] = true

			for _, u := range users {
				counts[u]++
			}

			if time.Since(lastStatus) >= 250*time.Millisecond {
				lastStatus = time.Now()
				b.setCompiled(counts)
			}

			if time.Since(lastLine) >= 30*time.Second {
				lastLine = time.Now()

				st := b.Status()
				for _, p := range st.Programs {
					if slices.ContainsFunc(ps, func(q program) bool { return q.name == p.Name }) {
						b.progress(p.Line())
					}
				}
			}
		}

		b.setCompiled(counts)
		tail <- strings.Join(other, "\n")
	}()

	return tail
}

// setCompiled records how many packages each program has compiled.
func (b *Build) setCompiled(counts map[string]int) {
	b.update(func(s *Status) {
		for i := range s.Programs {
			if n, ok := counts[s.Programs[i].Name]; ok {
				s.Programs[i].Compiled = n
			}
		}
	})
}

// goCommand is a go command in a tools module whose processes (go and
// every compile and link it starts) form one process group, killed
// together when ctx ends.
func goCommand(ctx context.Context, goBin, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, goBin, args...)
	cmd.Dir = dir
	cmd.Env = buildEnv()
	inGroup(cmd)

	return cmd
}

// goFailed is the error of a failed go command, with its last lines and
// what to do about it.
func goFailed(ctx context.Context, what string, ps []program, dir string, err error, output string) error {
	var names []string
	for _, p := range ps {
		names = append(names, p.name)
	}

	if ctx.Err() != nil {
		return fmt.Errorf("%s %s for the sandbox: stopped: %w", what, strings.Join(names, ", "), ctx.Err())
	}

	msg := fmt.Sprintf("%s %s for the sandbox (go %s in %s): %v", what, strings.Join(names, ", "), what, dir, err)
	if output != "" {
		msg += ":\n" + output
	}

	return fmt.Errorf("%s\n%s", msg, fixFor(output))
}

// fixFor is the advice for a go command's output.
func fixFor(output string) string {
	o := strings.ToLower(output)

	switch {
	case strings.Contains(o, "dial tcp") || strings.Contains(o, "no such host") || strings.Contains(o, "i/o timeout") ||
		strings.Contains(o, "connection refused") || strings.Contains(o, "proxyconnect") || strings.Contains(o, "tls handshake timeout"):
		return fmt.Sprintf("no network to the Go module proxy (GOPROXY=%s): connect this machine to it, or set %s to a directory with prebuilt binaries", goproxy(), BinDirEnv)
	case strings.Contains(o, "no space left on device"):
		return "the disk is full: free space in the Go build cache's and this cache's file systems (go env GOCACHE)"
	}

	return "check that Go is 1.26 or newer and the Go module proxy is reachable (GOPROXY=" + goproxy() + ")"
}

func goproxy() string {
	if p := os.Getenv("GOPROXY"); p != "" {
		return p
	}

	return "the default"
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}

	return strings.Join(lines, "\n")
}

// versionLDFlags stamp the version the binaries report, as the Kubernetes
// release build does (kubernetes hack/lib/version.sh kube::version::ldflags
// sets the same variables in k8s.io/component-base/version and
// k8s.io/client-go/pkg/version). Without them kube-apiserver reports
// v0.0.0-master and helm refuses charts with a kubeVersion constraint.
func versionLDFlags() string {
	v := strings.TrimPrefix(KubernetesVersion, "v")
	major, minor, _ := strings.Cut(v, ".")
	minor, _, _ = strings.Cut(minor, ".")

	var flags []string

	for _, pkg := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		flags = append(flags,
			"-X "+pkg+".gitVersion="+KubernetesVersion,
			"-X "+pkg+".gitMajor="+major,
			"-X "+pkg+".gitMinor="+minor,
			"-X "+pkg+".gitTreeState=clean",
		)
	}

	return strings.Join(flags, " ")
}
