package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// event is one line of `go test -json` (cmd/test2json's TestEvent, with
// the build events of go 1.24 and later).
type event struct {
	Time        time.Time
	Action      string
	Package     string
	Test        string
	Elapsed     float64
	Output      string
	ImportPath  string
	FailedBuild string
}

// Summary is what a run's events add up to.
type Summary struct {
	// Passed, Failed and Skipped count tests and subtests by their end
	// events. Failed also counts, once each, a package that failed with
	// no failed test (a build error, a panic outside a test, TestMain's
	// exit code) and a test that never ended (a timeout).
	Passed, Failed, Skipped int
	// Packages are the packages that ran tests, slowest first.
	Packages []Timing
	// Slowest are the top-level tests, slowest first, at most the n
	// asked of Report.
	Slowest []Timing
	// Wall is the time from the earliest event to the latest that
	// carried a time.
	Wall time.Duration
}

// Timing is how long one package or test took, and how it ended.
type Timing struct {
	Package, Test string
	Result        string
	Elapsed       time.Duration
}

// pkgRun is what is known of one package while its events arrive.
type pkgRun struct {
	// out holds, per top-level test, the output of it and its subtests
	// until it ends: shown if it failed, dropped otherwise, as plain
	// `go test` does.
	out    map[string]*strings.Builder
	order  []string        // top-level tests in the order they started
	ended  map[string]bool // top-level tests that ended
	failed int             // tests and subtests that failed
}

// Report reads test2json events from in and writes to w what plain
// `go test` would show, then the package times, the slowest n tests and
// the closing `N passed, N failed, N skipped` line. A line that is not a
// JSON event (go's own messages on a merged stderr) is copied as it is.
func Report(in io.Reader, w io.Writer, n int) (Summary, error) {
	var s Summary
	pkgs := map[string]*pkgRun{}
	var tests []Timing
	var first, last time.Time
	pkg := func(name string) *pkgRun {
		p := pkgs[name]
		if p == nil {
			p = &pkgRun{out: map[string]*strings.Builder{}, ended: map[string]bool{}}
			pkgs[name] = p
		}
		return p
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64*1024), 64*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil || e.Action == "" {
			fmt.Fprintf(w, "%s\n", line)
			continue
		}
		if !e.Time.IsZero() {
			if first.IsZero() || e.Time.Before(first) {
				first = e.Time
			}
			if e.Time.After(last) {
				last = e.Time
			}
		}
		switch {
		case e.Action == "build-output":
			fmt.Fprint(w, e.Output)
		case e.Test != "":
			p := pkg(e.Package)
			top, _, _ := strings.Cut(e.Test, "/")
			if p.ended[top] {
				break // framing test2json puts after the end ("=== NAME")
			}
			b := p.out[top]
			if b == nil {
				b = &strings.Builder{}
				p.out[top] = b
				p.order = append(p.order, top)
			}
			switch e.Action {
			case "output":
				b.WriteString(e.Output)
			case "pass":
				s.Passed++
			case "skip":
				s.Skipped++
			case "fail":
				s.Failed++
				p.failed++
			}
			if (e.Action == "pass" || e.Action == "skip" || e.Action == "fail") && e.Test == top {
				if e.Action == "fail" {
					fmt.Fprint(w, b.String())
				}
				delete(p.out, top)
				p.ended[top] = true
				tests = append(tests, Timing{e.Package, e.Test, e.Action, seconds(e.Elapsed)})
			}
		case e.Action == "output":
			if strings.HasPrefix(e.Output, "FAIL\t"+e.Package) || strings.HasPrefix(e.Output, "ok  \t"+e.Package) {
				// The package's last line: what did not end before it
				// (a timeout) never will.
				unfinished(w, e.Package, pkg(e.Package), &s, &tests)
			}
			if e.Output != "PASS\n" { // plain go test shows only the ok line
				fmt.Fprint(w, e.Output)
			}
		case e.Action == "pass" || e.Action == "fail" || e.Action == "skip":
			p := pkg(e.Package)
			unfinished(w, e.Package, p, &s, &tests)
			if e.Action == "fail" && p.failed == 0 {
				s.Failed++ // failed outside any test: build error, panic, TestMain
			}
			delete(pkgs, e.Package)
			if e.Action != "skip" { // skip: no test files
				s.Packages = append(s.Packages, Timing{e.Package, "", e.Action, seconds(e.Elapsed)})
			}
		}
	}
	if err := sc.Err(); err != nil {
		return s, err
	}
	// Events that stopped before their package's end (go test killed):
	// what was running did not finish.
	names := make([]string, 0, len(pkgs))
	for name := range pkgs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		unfinished(w, name, pkgs[name], &s, &tests)
	}
	s.Wall = last.Sub(first)
	slowestFirst(s.Packages)
	slowestFirst(tests)
	s.Slowest = tests[:min(n, len(tests))]
	write(w, s)
	return s, nil
}

// unfinished shows the output of p's tests that started and did not end,
// and counts each as failed.
func unfinished(w io.Writer, name string, p *pkgRun, s *Summary, tests *[]Timing) {
	for _, top := range p.order {
		b, ok := p.out[top]
		if !ok {
			continue
		}
		fmt.Fprint(w, b.String())
		fmt.Fprintf(w, "testreport: %s %s did not finish\n", name, top)
		s.Failed++
		p.failed++
		delete(p.out, top)
		p.ended[top] = true
		*tests = append(*tests, Timing{name, top, "fail", 0})
	}
}

func seconds(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }

// slowestFirst sorts by elapsed time, longest first, then by name.
func slowestFirst(ts []Timing) {
	sort.SliceStable(ts, func(i, j int) bool {
		if ts[i].Elapsed != ts[j].Elapsed {
			return ts[i].Elapsed > ts[j].Elapsed
		}
		if ts[i].Package != ts[j].Package {
			return ts[i].Package < ts[j].Package
		}
		return ts[i].Test < ts[j].Test
	})
}

func write(w io.Writer, s Summary) {
	fmt.Fprintf(w, "\npackage times (go test -json), slowest first:\n")
	for _, p := range s.Packages {
		fmt.Fprintf(w, "%9.2fs  %-4s  %s\n", p.Elapsed.Seconds(), p.Result, p.Package)
	}
	fmt.Fprintf(w, "\n%d slowest tests:\n", len(s.Slowest))
	for _, t := range s.Slowest {
		fmt.Fprintf(w, "%9.2fs  %-4s  %s %s\n", t.Elapsed.Seconds(), t.Result, t.Package, t.Test)
	}
	fmt.Fprintf(w, "\nwall time from the first event to the last: %.1fs\n", s.Wall.Seconds())
	fmt.Fprintf(w, "%d passed, %d failed, %d skipped\n", s.Passed, s.Failed, s.Skipped)
}
