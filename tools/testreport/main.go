// Command testreport reads the events of `go test -json` (test2json) on
// standard input, or from the file named as its argument, and writes what
// a plain `go test` would have shown (each package's ok or FAIL line, the
// output of failed tests, build errors), then each package's time, the ten
// slowest tests and a closing line `N passed, N failed, N skipped`. It
// exits 1 when a test or a package failed, so that a CI script piping
// `go test -json` into it fails with the tests. .ci/run uses it, so that
// every CI log shows where the suite's time goes (issue 29).
package main

import (
	"fmt"
	"io"
	"os"
)

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

// run is main with its arguments and files: 0 when every test passed, 1
// when one failed, 2 when the events could not be read.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	in := stdin
	switch len(args) {
	case 0:
	case 1:
		f, err := os.Open(args[0])
		if err != nil {
			fmt.Fprintln(stderr, "testreport:", err)
			return 2
		}
		defer f.Close()
		in = f
	default:
		fmt.Fprintln(stderr, "usage: go test -json ./... | testreport   (or: testreport EVENTS.json)")
		return 2
	}
	s, err := Report(in, stdout, 10)
	if err != nil {
		fmt.Fprintln(stderr, "testreport:", err)
		return 2
	}
	if s.Failed > 0 {
		return 1
	}
	return 0
}
