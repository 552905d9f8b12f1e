package ui

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// The network screen detects the operator's address in a command, records
// it in firewall.allow and shows it; the operator can replace it.
func TestNetworkShowsDetectedAddress(t *testing.T) {
	g, b := guardedBackend(t)
	calls := 0
	b.OperatorAddress = func(ctx context.Context, s *spec.Spec) ([]string, string, error) {
		g.io("operator address")
		calls++
		return []string{"203.0.113.7/32", "2001:db8:1:2::/64"}, "https://echo.test", nil
	}
	h := newHarnessFor(t, g, b, Options{Width: 120, Height: 40})
	h.open(scrNetwork)
	want := []string{"203.0.113.7/32", "2001:db8:1:2::/64"}
	if got := h.m.c.spec.Firewall.Allow; !slices.Equal(got, want) {
		t.Fatalf("firewall.allow = %v, want %v", got, want)
	}
	mustContain(t, ansi.Strip(h.m.View()), "detected 203.0.113.7/32, 2001:db8:1:2::/64 from https://echo.test")

	h.Key("tab", "tab", "tab", "tab", "tab") // API access
	for range len("203.0.113.7/32, 2001:db8:1:2::/64") {
		h.Key("backspace")
	}
	h.typeText("198.51.100.0/24, 192.0.2.9/32")
	if got := h.m.c.spec.Firewall.Allow; !slices.Equal(got, []string{"198.51.100.0/24", "192.0.2.9/32"}) {
		t.Errorf("edited firewall.allow = %v", got)
	}
	h.open(scrPools)
	h.open(scrNetwork)
	if calls != 1 {
		t.Errorf("detected %d times, want once", calls)
	}
}

func TestNetworkDetectionFailureAsksForRanges(t *testing.T) {
	g, b := guardedBackend(t)
	b.OperatorAddress = func(ctx context.Context, s *spec.Spec) ([]string, string, error) {
		g.io("operator address")
		return nil, "https://echo.test", errors.New("https://echo.test: connection refused")
	}
	h := newHarnessFor(t, g, b, Options{Width: 120, Height: 40})
	h.open(scrNetwork)
	if len(h.m.c.spec.Firewall.Allow) != 0 {
		t.Errorf("firewall.allow = %v after a failed detection", h.m.c.spec.Firewall.Allow)
	}
	mustContain(t, ansi.Strip(h.m.View()), "could not detect your address", "type the ranges")
}

func TestSplitList(t *testing.T) {
	cases := map[string][]string{"": nil, " , ": nil, "a/32": {"a/32"}, "a/32, b/64 c/8": {"a/32", "b/64", "c/8"}}
	for in, want := range cases {
		if got := splitList(in); !slices.Equal(got, want) {
			t.Errorf("splitList(%q) = %v, want %v", in, got, want)
		}
	}
}

// The network screen's enter hint says what enter does: the next field,
// and on the last field, continue.
func TestNetworkEnterHintIsTrue(t *testing.T) {
	h, _ := newHarness(t, Options{Width: 120, Height: 40})
	h.Settle()
	h.open(scrNetwork)
	scr := h.m.screens[scrNetwork].(*networkScreen)
	for i := 0; i < len(scr.inputs)-1; i++ {
		if f := h.m.footer(); !strings.Contains(f, "enter next field") {
			t.Fatalf("field %d: footer %q lacks \"enter next field\"", i, f)
		}
		h.Key("enter")
		if scr.focus != i+1 {
			t.Fatalf("enter on field %d moved to %d", i, scr.focus)
		}
	}
	if f := h.m.footer(); !strings.Contains(f, "enter continue") {
		t.Fatalf("last field: footer %q lacks \"enter continue\"", f)
	}
	h.Key("enter")
	h.Settle()
	if h.m.active != scrPools {
		t.Errorf("enter on the last field opened %s, want pools", h.m.active)
	}
}
