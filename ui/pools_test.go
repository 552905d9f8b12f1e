package ui

import (
	"strings"
	"testing"

	"github.com/ohmytalos/ohmytalos/ui/components"
)

func TestPoolCountChangesCost(t *testing.T) {
	h, _ := newHarness(t, Options{Width: 120, Height: 40})
	h.open(scrPools)
	before := h.m.c.estimate
	if before == nil {
		t.Fatalf("no estimate on the pools screen: %v", h.m.c.estimateErr)
	}
	mustContain(t, h.m.View(), before.MonthlyNet.Format(2))

	h.Key("down", "+") // the worker pool: 2 -> 3 servers
	if got := h.m.c.spec.Pools[0].Count; got != 3 {
		t.Fatalf("worker count = %d, want 3", got)
	}
	after := h.m.c.estimate
	cat := h.m.c.catalog
	perServer := cat.ServerTypes["cpx32"].Prices["nbg1"].Monthly + cat.PrimaryIPv4["nbg1"].Monthly + cat.PrimaryIPv6["nbg1"].Monthly
	if d := after.MonthlyNet - before.MonthlyNet; d.Cents() != perServer.RoundCents().Cents() {
		t.Errorf("one more cpx32 changed the total by %s, want %s", d.Format(2), perServer.Format(2))
	}
	view := h.m.View()
	mustContain(t, view, after.MonthlyNet.Format(2))
	if strings.Contains(view, before.MonthlyNet.Format(2)+" EUR") {
		t.Errorf("the old total is still shown:\n%s", view)
	}

	h.Key("-", "-", "-") // 3 -> 1, then refuses 0
	if got := h.m.c.spec.Pools[0].Count; got != 1 {
		t.Errorf("worker count = %d, want 1 (never below one)", got)
	}
	mustContain(t, h.m.View(), "at least one server")
}

func TestPoolsAddEditRemove(t *testing.T) {
	h, _ := newHarness(t, Options{Width: 80, Height: 24})
	h.open(scrPools)
	h.Key("a")
	sp := h.m.c.spec
	if len(sp.Pools) != 2 {
		t.Fatalf("pools = %d after add, want 2", len(sp.Pools))
	}
	added := sp.Pools[1]
	if added.Subnet == "" || added.Subnet == sp.ControlPlane.Subnet || added.Subnet == sp.Pools[0].Subnet {
		t.Errorf("new pool subnet %q collides or is empty", added.Subnet)
	}
	if n := h.m.c.networkErrors(); n != 0 {
		t.Errorf("adding a pool produced %d network error(s): %v", n, h.m.c.findings)
	}

	// Edit: rename to storage, 4 servers, 100 GB volume.
	h.Key("e")
	if !h.m.screens[scrPools].capturing() {
		t.Fatal("the edit form does not capture keys")
	}
	for range 10 {
		h.Key("backspace")
	}
	h.typeText("storage")
	h.Key("tab")
	h.Key("backspace")
	h.typeText("4")
	h.Key("tab", "tab")
	h.Key("backspace")
	h.typeText("100")
	h.Key("enter")
	p := h.m.c.spec.Pools[1]
	if p.Name != "storage" || p.Count != 4 || p.VolumeSize != 100 {
		t.Errorf("edited pool = %+v, want storage x4 with 100 GB", p)
	}
	if _, ok := components.EstimateGroup(h.m.c.estimate, "storage"); !ok {
		t.Errorf("the estimate has no storage group: %+v", h.m.c.estimate)
	}

	// Remove asks first; n keeps it, y removes it.
	h.Key("d")
	mustContain(t, h.m.View(), "Remove pool \"storage\"")
	h.Key("n")
	if len(h.m.c.spec.Pools) != 2 {
		t.Fatal("answering no removed the pool")
	}
	h.Key("d", "y")
	if len(h.m.c.spec.Pools) != 1 || h.m.c.spec.Pools[0].Name != "worker" {
		t.Errorf("pools after remove = %+v", h.m.c.spec.Pools)
	}
	// The control plane cannot be removed.
	h.Key("up", "up", "d")
	mustContain(t, h.m.View(), "cannot be removed")
}

func TestTypePicker(t *testing.T) {
	h, _ := newHarness(t, Options{Width: 120, Height: 40})
	h.open(scrPools)
	h.Key("down", "t")
	view := h.m.View()
	mustContain(t, view, "server type in nbg1", "cpx42", "25.49")
	pk := h.m.screens[scrPools].(*poolsScreen).picker
	pick := func(name string) {
		for i, st := range pk.types {
			if st.Name == name {
				pk.cursor = i
			}
		}
		h.Key("enter")
	}
	pick("cpx21") // not orderable in nbg1 in the offline catalog
	if h.m.c.spec.Pools[0].ServerType != "cpx32" {
		t.Fatal("a type that cannot be ordered was applied")
	}
	mustContain(t, h.m.View(), "not orderable")
	pick("cpx42")
	if got := h.m.c.spec.Pools[0].ServerType; got != "cpx42" {
		t.Fatalf("server type = %s, want cpx42", got)
	}
	if g, _ := components.EstimateGroup(h.m.c.estimate, "worker"); !strings.Contains(h.m.View(), g.MonthlyNet.Format(2)) {
		t.Errorf("the worker cost %s is not shown", g.MonthlyNet.Format(2))
	}
}
