package doctor

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestREADMEListsEveryCheck keeps the README's doctor section in step with
// the registry: the count and a table row per check ID.
func TestREADMEListsEveryCheck(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	checks := Checks()
	if want := fmt.Sprintf("runs %d checks", len(checks)); !strings.Contains(readme, want) {
		t.Errorf("README does not say %q", want)
	}
	for _, c := range checks {
		if !strings.Contains(readme, "| `"+c.ID+"` |") {
			t.Errorf("README's doctor checks table has no row for %s", c.ID)
		}
	}
}
