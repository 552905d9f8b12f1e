package openapicheck

import (
	"testing"
)

// loadHCloud loads Hetzner's description, skipping when it is absent.
func loadHCloud(t *testing.T) *Checker {
	t.Helper()
	p, ok := LocateHCloud()
	if !ok {
		t.Skipf("Hetzner's API description %s is absent (shared/data beside the repository holds it)", p)
	}
	c, err := LoadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestLoadsHetznersDescription(t *testing.T) {
	c := loadHCloud(t)
	if c.Version() != "3.0.3" || c.Operations() < 150 {
		t.Errorf("version %s, %d operations", c.Version(), c.Operations())
	}
}
