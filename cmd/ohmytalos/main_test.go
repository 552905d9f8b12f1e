package main

import (
	"os"
	"testing"

	"github.com/ohmytalos/ohmytalos/ui/theme/quietstart"
)

// TestMain puts TERM back, as main does: the test binary imports
// quietstart too, and main() does not run here.
func TestMain(m *testing.M) {
	quietstart.Restore()
	os.Exit(m.Run())
}
