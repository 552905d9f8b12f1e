package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The fixtures are real `go test -json` output of the sample module in
// testdata/sample (regenerate with
// `cd testdata/sample && go test -count=1 -json ./bad ./broken ./good ./nofiles ./panics > ../events.json`
// and `go test -count=1 -json -timeout 1s ./hangs > ../timeout.json`).

func report(t *testing.T, events string, n int) (Summary, string) {
	t.Helper()
	var out bytes.Buffer
	s, err := Report(strings.NewReader(events), &out, n)
	if err != nil {
		t.Fatal(err)
	}
	return s, out.String()
}

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func lastLine(out string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	return lines[len(lines)-1]
}

func TestReportShowsWhatPlainGoTestShows(t *testing.T) {
	s, out := report(t, fixture(t, "events.json"), 10)
	// TestPasses, TestSub/ok, TestPasses, TestSlow, TestParallel and its
	// two subtests pass; TestFails, TestSub/broken, TestSub, TestPanics
	// and the package that does not build fail; TestSkips skips.
	if s.Passed != 7 || s.Failed != 5 || s.Skipped != 1 {
		t.Errorf("passed %d, failed %d, skipped %d; want 7, 5, 1", s.Passed, s.Failed, s.Skipped)
	}
	if got, want := lastLine(out), "7 passed, 5 failed, 1 skipped"; got != want {
		t.Errorf("last line %q, want %q", got, want)
	}
	for _, want := range []string{
		"ok  \tsample/good\t",
		"FAIL\tsample/bad\t",
		"FAIL\tsample/panics\t",
		"FAIL\tsample/broken [build failed]",
		"?   \tsample/nofiles\t[no test files]",
		"bad_test.go:6: the failure message",
		"bad_test.go:10: the subtest failure",
		"--- FAIL: TestSub/broken",
		"panic: boom",
		"broken_test.go:6:32: undefined: undefined",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// What plain go test hides: the output of passing and skipped tests,
	// the PASS line before ok.
	for _, hidden := range []string{"a log line that plain go test hides", "skipped on purpose", "--- PASS: TestSlow", "\nPASS\n"} {
		if strings.Contains(out, hidden) {
			t.Errorf("output shows %q, which plain go test hides:\n%s", hidden, out)
		}
	}
}

func TestReportTimesPackagesAndTests(t *testing.T) {
	s, out := report(t, fixture(t, "events.json"), 3)
	var pkgs []string
	for _, p := range s.Packages {
		pkgs = append(pkgs, p.Result+" "+p.Package)
	}
	// good sleeps 0.5 s in all; the others take milliseconds, and a
	// package without tests has no time.
	if len(pkgs) != 4 || pkgs[0] != "pass sample/good" || strings.Contains(strings.Join(pkgs, ","), "nofiles") {
		t.Errorf("packages %v, want sample/good first and four in all, without sample/nofiles", pkgs)
	}
	if len(s.Slowest) != 3 {
		t.Fatalf("%d slowest tests, want the 3 asked for: %v", len(s.Slowest), s.Slowest)
	}
	if got := s.Slowest[0]; got.Package != "sample/good" || got.Test != "TestSlow" || got.Elapsed.Seconds() < 0.3 {
		t.Errorf("slowest test %+v, want sample/good TestSlow, at least 0.3 s", got)
	}
	for _, tm := range s.Slowest {
		if strings.Contains(tm.Test, "/") {
			t.Errorf("slowest tests list subtest %s; they are in their parent's time", tm.Test)
		}
	}
	for i := 1; i < len(s.Slowest); i++ {
		if s.Slowest[i].Elapsed > s.Slowest[i-1].Elapsed {
			t.Errorf("slowest tests out of order: %v", s.Slowest)
		}
	}
	for _, want := range []string{"package times", "    0.4", "pass  sample/good\n", "3 slowest tests:", "pass  sample/good TestSlow\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if s.Wall <= 0 {
		t.Errorf("wall time %v, want the span of the events' times", s.Wall)
	}
}

func TestReportCountsATestThatNeverEnded(t *testing.T) {
	// go test -timeout: the running test gets no end event, only its
	// package does.
	s, out := report(t, fixture(t, "timeout.json"), 10)
	if s.Passed != 1 || s.Failed != 1 {
		t.Errorf("passed %d, failed %d; want 1 (TestQuick), 1 (TestHangs)", s.Passed, s.Failed)
	}
	timedOut := strings.Index(out, "panic: test timed out after 1s")
	note := strings.Index(out, "testreport: sample/hangs TestHangs did not finish")
	fail := strings.Index(out, "FAIL\tsample/hangs\t")
	if timedOut < 0 || note < timedOut || fail < note {
		t.Errorf("want the timeout's panic, then that TestHangs did not finish, then the FAIL line:\n%s", out)
	}
	if got := lastLine(out); got != "1 passed, 1 failed, 0 skipped" {
		t.Errorf("last line %q", got)
	}
}

func TestReportCountsTestsCutOffByTheEndOfInput(t *testing.T) {
	// go test killed: the events stop while a test runs.
	var cut []string
	for _, line := range strings.SplitAfter(fixture(t, "timeout.json"), "\n") {
		if strings.Contains(line, "panic: test timed out") {
			break
		}
		cut = append(cut, line)
	}
	s, out := report(t, strings.Join(cut, ""), 10)
	if s.Passed != 1 || s.Failed != 1 {
		t.Errorf("passed %d, failed %d; want 1, 1 (TestHangs cut off)", s.Passed, s.Failed)
	}
	if !strings.Contains(out, "=== RUN   TestHangs\ntestreport: sample/hangs TestHangs did not finish\n") {
		t.Errorf("output does not show TestHangs unfinished:\n%s", out)
	}
}

func TestReportCopiesLinesThatAreNotEvents(t *testing.T) {
	// go's own messages, when stderr is merged into the events.
	in := "go: downloading example.com/m v1.0.0\n" +
		`{"Action":"start","Package":"p"}` + "\n" +
		`{"Action":"run","Package":"p","Test":"TestA"}` + "\n" +
		`{"Action":"pass","Package":"p","Test":"TestA","Elapsed":1.5}` + "\n" +
		"{not json\n" +
		`{"Action":"output","Package":"p","Output":"ok  \tp\t1.6s\n"}` + "\n" +
		`{"Action":"pass","Package":"p","Elapsed":1.6}` + "\n"
	s, out := report(t, in, 10)
	if !strings.HasPrefix(out, "go: downloading example.com/m v1.0.0\n{not json\nok  \tp\t1.6s\n") {
		t.Errorf("output:\n%s", out)
	}
	if s.Passed != 1 || s.Failed != 0 || lastLine(out) != "1 passed, 0 failed, 0 skipped" {
		t.Errorf("summary %+v, last line %q", s, lastLine(out))
	}
}

func TestReportIgnoresFramingAfterATestEnded(t *testing.T) {
	// test2json names the test whose output follows; after a parallel
	// test ends, the line naming its parent is no output of a running test.
	in := `{"Action":"run","Package":"p","Test":"TestA"}` + "\n" +
		`{"Action":"pass","Package":"p","Test":"TestA","Elapsed":0}` + "\n" +
		`{"Action":"output","Package":"p","Test":"TestA","Output":"=== NAME  TestA\n"}` + "\n" +
		`{"Action":"pass","Package":"p","Elapsed":0.1}` + "\n"
	s, out := report(t, in, 10)
	if s.Failed != 0 || strings.Contains(out, "did not finish") || strings.Contains(out, "=== NAME") {
		t.Errorf("failed %d, output:\n%s", s.Failed, out)
	}
}

func TestRunExitCodes(t *testing.T) {
	dir := t.TempDir()
	passing := filepath.Join(dir, "pass.json")
	if err := os.WriteFile(passing, []byte(`{"Action":"pass","Package":"p","Test":"TestA"}`+"\n"+`{"Action":"pass","Package":"p"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		args  []string
		stdin string
		want  int
	}{
		{"passing, from a file", []string{passing}, "", 0},
		{"failing, from stdin", nil, fixture(t, "events.json"), 1},
		{"timed out", []string{filepath.Join("testdata", "timeout.json")}, "", 1},
		{"no such file", []string{filepath.Join(dir, "nosuch.json")}, "", 2},
		{"two files", []string{passing, passing}, "", 2},
	} {
		var stdout, stderr bytes.Buffer
		if got := run(c.args, strings.NewReader(c.stdin), &stdout, &stderr); got != c.want {
			t.Errorf("%s: exit %d, want %d (stderr %q)", c.name, got, c.want, stderr.String())
		}
	}
}
