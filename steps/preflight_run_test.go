package steps

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/sandbox"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// preflight runs the pre-flight of w's spec with fresh clients.
func (w *world) preflight(t *testing.T) Findings {
	t.Helper()
	fs, err := Preflight(context.Background(), w.deps(), w.env(t))
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// TestPreflightHealthySeed: the seed cluster on a fresh project has no
// error and no warning, only notes (its snapshots are to be built).
func TestPreflightHealthySeed(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "../examples/seed.yaml")
	fs := w.preflight(t)
	for _, f := range fs {
		if f.Severity != SeverityNote {
			t.Errorf("healthy seed: %s", f)
		}
	}
	if !fs.Has(CheckSnapshots, "schematics.controlPlane") || !fs.Has(CheckSnapshots, "schematics.worker") {
		t.Errorf("no note about the snapshots to build: %v", fs)
	}
}

// want fails unless fs holds an error of check on field whose reason has
// every one of parts.
func want(t *testing.T, fs Findings, sev Severity, check, field string, parts ...string) {
	t.Helper()
	for _, f := range fs {
		if f.Check != check || f.Field != field || f.Severity != sev {
			continue
		}
		for _, p := range parts {
			if !strings.Contains(f.Reason+" "+f.Fix, p) {
				t.Errorf("%s lacks %q", f, p)
			}
		}
		if f.Fix == "" {
			t.Errorf("%s has no fix", f)
		}
		return
	}
	t.Errorf("no %s %s on %s in %v", sev, check, field, fs)
}

func TestPreflightServerTypes(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "../examples/seed.yaml")
	announced := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	w.SB.HCloud.Withdraw("cpx32", "", announced, announced.AddDate(0, 3, 0))
	w.SB.HCloud.Withdraw("cpx22", "nbg1", announced, announced.AddDate(0, 1, 0))
	fs := w.preflight(t)
	want(t, fs, SeverityError, CheckTypes, "pools[0].serverType", "deprecated", "announced 2026-09-01, unavailable after 2026-12-01", "try ")
	want(t, fs, SeverityError, CheckTypes, "controlPlane.serverType", "not orderable in nbg1", "unavailable after 2026-10-01")

	w.Spec.Pools[0].ServerType = "cpx99"
	want(t, w.preflight(t), SeverityError, CheckTypes, "pools[0].serverType", "does not exist")
}

// foreignServers makes n servers of another tool in the project.
func foreignServers(t *testing.T, w *world, n int) {
	t.Helper()
	c := w.client()
	for i := range n {
		_, _, err := c.Server.Create(context.Background(), hcloud.ServerCreateOpts{Name: fmt.Sprintf("other-%d", i),
			ServerType: &hcloud.ServerType{Name: "cx23"}, Image: &hcloud.Image{Name: "debian-12"}, Location: &hcloud.Location{Name: "fsn1"}})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestPreflightLimits(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "../examples/seed.yaml")
	foreignServers(t, w, 7)
	// No limits stated: 12 servers pass Hetzner's usual 10 only as a warning.
	want(t, w.preflight(t), SeverityWarning, CheckLimits, "limits.servers", "creates 5 servers", "the 7 the project holds", "12")

	w.Spec.Limits = &spec.Limits{Servers: 10, PrimaryIPs: 20, Volumes: 1}
	w.Spec.Pools[0].VolumeSize = 20
	fs := w.preflight(t)
	want(t, fs, SeverityError, CheckLimits, "limits.servers", "creates 5 servers", "12, over the project's limit", "of 10", "delete 2")
	want(t, fs, SeverityError, CheckLimits, "limits.primaryIPs", "creates 10 primary IPs", "the 14 the project holds")
	want(t, fs, SeverityError, CheckLimits, "limits.volumes", "creates 2 volumes")
}

func TestPreflightSnapshotsNeedABuilder(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "../examples/seed.yaml")
	w.Spec.Pools[0].ServerType, w.Spec.Pools[0].Location = "cax21", "fsn1"
	now := time.Now()
	for _, st := range []string{"cax11", "cax21", "cax31", "cax41"} {
		w.SB.HCloud.Withdraw(st, "nbg1", now, now.AddDate(0, 1, 0))
	}
	fs := w.preflight(t)
	want(t, fs, SeverityError, CheckSnapshots, "location", "no arm64 server type is orderable in nbg1", "fsn1")
	if len(fs.Errors()) != 1 {
		t.Errorf("errors = %v, want only the snapshot's", fs.Errors())
	}
}

func TestPreflightReachability(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "../examples/seed.yaml")
	w.Spec.Firewall.Allow = []string{"203.0.113.7/32"}
	want(t, w.preflight(t), SeverityError, CheckReach, "firewall.allow", "does not admit your address [127.0.0.1]", "--allow-lockout", "lock this machine out", "127.0.0.1/32")
	w.Spec.Firewall.Allow = []string{"203.0.113.7/32", "127.0.0.0/8"}
	if fs := w.preflight(t); fs.Has(CheckReach, "firewall.allow") {
		t.Errorf("an admitted address: %v", fs)
	}
}

func TestPreflightBudget(t *testing.T) {
	t.Parallel()
	sb, err := sandbox.Start(context.Background(), sandbox.Options{RateLimit: 200})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	w := newWorld(t, "../examples/seed.yaml")
	w.SB = sb
	want(t, w.preflight(t), SeverityError, CheckBudget, "secrets.hcloudToken", "apply needs about", "of the project's 200 are left", "wait about")
}

// TestCreateOverALimitSaysWhatToDo: a limit the spec did not state (the
// API cannot tell it) surfaces at create as resource_limit_exceeded, with
// the fix, and apply stops there.
func TestCreateOverALimitSaysWhatToDo(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "../examples/seed.yaml")
	w.SB.HCloud.SetLimit("placement_groups", 1)
	_, err := w.apply(t, context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), "resource_limit_exceeded") || !strings.Contains(err.Error(), "limits.placementGroups") {
		t.Fatalf("apply: %v", err)
	}
	for _, sv := range w.SB.HCloud.Servers() {
		if strings.HasPrefix(sv.Name, w.Spec.Name+"-") {
			t.Errorf("node %s created past the failed pools step", sv.Name)
		}
	}
}

// TestPreflightPlacementGroupsPerProject: Hetzner's 50 spread groups per
// project count the groups other tools made.
func TestPreflightPlacementGroupsPerProject(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "../examples/seed.yaml")
	c := w.client()
	for i := range 49 {
		if _, _, err := c.PlacementGroup.Create(context.Background(), hcloud.PlacementGroupCreateOpts{
			Name: fmt.Sprintf("other-%d", i), Type: hcloud.PlacementGroupTypeSpread}); err != nil {
			t.Fatal(err)
		}
	}
	want(t, w.preflight(t), SeverityError, CheckLimits, "limits.placementGroups", "creates 2 placement groups", "the 49 the project holds", "Hetzner's limit of placement groups per project of 50")
}

// TestPreflightAddressUndetected: when this machine's address cannot be
// detected, the firewall would admit no one: an error naming the fix.
func TestPreflightAddressUndetected(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "../examples/seed.yaml")
	w.Spec.Firewall.IPEchoURL = "http://127.0.0.1:1/"
	want(t, w.preflight(t), SeverityError, CheckReach, "firewall.allow", "could not be detected", "firewall.allow")
}
