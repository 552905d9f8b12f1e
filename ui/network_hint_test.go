package ui

import (
	"strings"
	"testing"
)

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
