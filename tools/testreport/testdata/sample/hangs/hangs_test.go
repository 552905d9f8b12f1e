// Package hangs is a sample whose test outlives go test's -timeout; the
// fixture timeout.json is `go test -json -timeout 1s ./hangs`.
package hangs

import (
	"testing"
	"time"
)

func TestQuick(t *testing.T) {}

func TestHangs(t *testing.T) { time.Sleep(time.Minute) }
