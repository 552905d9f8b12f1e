// Package good is a sample whose tests pass, skip and run in parallel;
// tools/testreport's fixture events.json is its go test -json output.
package good

import (
	"testing"
	"time"
)

func TestPasses(t *testing.T) { t.Log("a log line that plain go test hides") }

func TestSkips(t *testing.T) { t.Skip("skipped on purpose") }

func TestSlow(t *testing.T) { time.Sleep(300 * time.Millisecond) } // a sample's duration, not a test of the product

func TestParallel(t *testing.T) {
	for _, name := range []string{"a", "b"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			time.Sleep(100 * time.Millisecond)
		})
	}
}
