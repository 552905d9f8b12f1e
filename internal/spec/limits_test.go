package spec

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestHugeSpecRefused is issue 21 item 7: 3000 pools of 100 servers are
// refused at once, by Hetzner's network limits, in a bounded message.
func TestHugeSpecRefused(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: huge\npools:\n")
	for i := range 3000 {
		fmt.Fprintf(&b, "  - name: p%d\n    serverType: cpx32\n    count: 100\n    subnet: 10.%d.%d.0/24\n", i, i/256, i%256)
	}
	start := time.Now()
	_, err := Parse([]byte(b.String()))
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("validation took %s", took)
	}
	ps, ok := err.(Problems)
	if !ok || !ps.Has("pools") {
		t.Fatalf("err = %v, want a pools problem", err)
	}
	msg := ps.Error()
	for _, want := range []string{"a Hetzner network holds at most 100", "a Hetzner network has at most 50", "300003 servers"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
	if len(msg) > 4000 {
		t.Errorf("message is %d bytes", len(msg))
	}
}

// TestTotalsWithinLimits: the seed passes; stated account limits bound it.
func TestTotalsWithinLimits(t *testing.T) {
	s, err := Load("../../examples/seed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.PlacementGroupCount(); got != 2 {
		t.Errorf("placement groups = %d, want 2", got)
	}
	s.Limits = &Limits{Servers: 4}
	if ps := s.Validate(); !ps.Has("limits.servers") {
		t.Errorf("5 servers under a limit of 4: %v", ps)
	}
	s.Limits = &Limits{Servers: 10, Volumes: -1}
	if ps := s.Validate(); ps.Has("limits.servers") || !ps.Has("limits.volumes") {
		t.Errorf("problems = %v", ps)
	}
}

// TestHugeNameBounded: a 10 MB name is quoted as its first 64 characters.
func TestHugeNameBounded(t *testing.T) {
	name := strings.Repeat("A", 10<<20)
	_, err := Parse([]byte("name: " + name + "\npools:\n  - name: " + name + "\n    serverType: cpx32\n    count: 1\n    subnet: 10.0.2.0/24\n"))
	if err == nil {
		t.Fatal("a 10 MB name was accepted")
	}
	msg := err.Error()
	if len(msg) > 8000 {
		t.Errorf("error is %d bytes", len(msg))
	}
	if !strings.Contains(msg, `"`+strings.Repeat("A", MaxQuoted)+`…"`) {
		t.Errorf("name not quoted as a bounded prefix:\n%.500s", msg)
	}
}

func TestBoundQuoted(t *testing.T) {
	long := strings.Repeat("x", 200)
	got := boundQuoted(fmt.Sprintf("%q is bad, and %q too, %q", long, "ok", long))
	want := fmt.Sprintf("%q is bad, and \"ok\" too, %q", strings.Repeat("x", 64)+"…", strings.Repeat("x", 64)+"…")
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestLimitsParse(t *testing.T) {
	s, err := Parse([]byte("name: demo\nlimits: {servers: 20, primaryIPs: 40, volumes: 10, placementGroups: 5}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Limits == nil || *s.Limits != (Limits{Servers: 20, PrimaryIPs: 40, Volumes: 10, PlacementGroups: 5}) {
		t.Errorf("limits = %+v", s.Limits)
	}
	if _, err := Parse([]byte("name: demo\nlimits: {server: 20}\n")); err == nil || !strings.Contains(err.Error(), "limits.server") {
		t.Errorf("unknown key: %v", err)
	}
	if _, err := Parse([]byte("name: demo\nlimits: {servers: 3}\n")); err == nil || !strings.Contains(err.Error(), "limits.servers") {
		t.Errorf("5 servers over a limit of 3: %v", err)
	}
}
