package steps

import (
	"strings"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/pricing"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

func TestCheckServerTypes(t *testing.T) {
	cat, err := pricing.Offline()
	if err != nil {
		t.Fatal(err)
	}
	if ps := CheckServerTypes(spec.Default("demo"), cat); len(ps) != 0 {
		t.Errorf("default spec: %v", ps)
	}
	s := spec.Default("demo")
	s.Pools[0].ServerType = "cpx99"
	s.ControlPlane.ServerType = "cx22"
	ps := CheckServerTypes(s, cat)
	if !ps.Has("pools[0].serverType") || !ps.Has("controlPlane.serverType") {
		t.Fatalf("problems = %v", ps)
	}
	for _, p := range ps {
		if p.Fix == "" || !strings.Contains(p.Reason, "c") {
			t.Errorf("problem without fix: %+v", p)
		}
	}
}
