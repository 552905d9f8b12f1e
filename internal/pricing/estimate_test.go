package pricing

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestEstimateFixtureToTheCent(t *testing.T) {
	c := fixture(t)
	e, err := c.Estimate(seedUsage())
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		group, item, net, gross, hourly string
	}{
		{"controlplane", "cpx22 server (nbg1)", "17.97", "21.38", "0.0288"},
		{"controlplane", "primary IPv4", "1.50", "1.79", "0.0024"},
		{"controlplane", "primary IPv6", "0.00", "0.00", "0.0000"},
		{"worker", "cpx32 server (nbg1)", "20.98", "24.97", "0.0336"},
		{"worker", "volume 10 GB", "0.88", "1.05", "0.0000"},
		{"worker", "primary IPv4", "1.00", "1.19", "0.0016"},
		{"worker", "primary IPv6", "0.00", "0.00", "0.0000"},
		{"ingress", "lb11 load balancer (nbg1)", "6.57", "7.82", "0.0105"},
		{"images", "snapshot talos-amd64", "0.01", "0.01", "0.0000"},
	}
	if len(e.Rows) != len(want) {
		t.Fatalf("want %d rows, got %d: %+v", len(want), len(e.Rows), e.Rows)
	}
	for i, w := range want {
		r := e.Rows[i]
		if r.Group != w.group || r.Item != w.item || r.MonthlyNet.String() != w.net ||
			r.MonthlyGross.String() != w.gross || r.HourlyNet.Format(4) != w.hourly {
			t.Errorf("row %d = %s/%s net %s gross %s hourly %s; want %+v", i, r.Group, r.Item,
				r.MonthlyNet, r.MonthlyGross, r.HourlyNet.Format(4), w)
		}
	}
	if e.MonthlyNet.String() != "48.91" || e.MonthlyGross.String() != "58.21" || e.HourlyNet.Format(4) != "0.0769" {
		t.Errorf("totals: net %s gross %s hourly %s; want 48.91, 58.21, 0.0769", e.MonthlyNet, e.MonthlyGross, e.HourlyNet.Format(4))
	}
	groups := map[string][2]string{
		"controlplane": {"19.47", "23.17"}, "worker": {"22.86", "27.21"}, "ingress": {"6.57", "7.82"}, "images": {"0.01", "0.01"},
	}
	if len(e.Groups) != len(groups) || e.Groups[0].Group != "controlplane" || e.Groups[3].Group != "images" {
		t.Fatalf("groups in first-seen order: %+v", e.Groups)
	}
	for _, g := range e.Groups {
		if w := groups[g.Group]; g.MonthlyNet.String() != w[0] || g.MonthlyGross.String() != w[1] {
			t.Errorf("group %s: net %s gross %s, want %v", g.Group, g.MonthlyNet, g.MonthlyGross, w)
		}
	}
	assertExactTotals(t, e)
	for _, n := range []string{"Hetzner bills by the hour up to the monthly cap",
		"20 TB traffic included per cpx22 server in nbg1", "20 TB traffic included per cpx32 server in nbg1",
		"20 TB traffic included per lb11 load balancer", "19.00 % VAT", "offline prices as of 2026-01-02 (Hetzner price list)"} {
		if !containsNote(e.Notes, n) {
			t.Errorf("notes %q lack %q", e.Notes, n)
		}
	}
	if e.Label != "offline prices as of 2026-01-02 (Hetzner price list)" {
		t.Errorf("label %q", e.Label)
	}
}

func TestEstimateBackupsAndVATOverride(t *testing.T) {
	c := fixture(t)
	u := Usage{Pools: []PoolUsage{{Name: "cp", ServerType: "cpx22", Location: "nbg1", Count: 3}}, Backups: true, VATRate: "0"}
	e, err := c.Estimate(u)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Rows) != 2 || e.Rows[1].MonthlyNet.String() != "3.59" || e.Rows[1].HourlyNet.Format(5) != "0.00576" {
		t.Fatalf("backup row: %+v", e.Rows)
	}
	if e.MonthlyNet != e.MonthlyGross || e.MonthlyNet.String() != "21.56" {
		t.Errorf("with VAT 0 gross must equal net: net %s gross %s", e.MonthlyNet, e.MonthlyGross)
	}
	c.BackupPercent = ""
	if _, err := c.Estimate(u); err == nil || !strings.Contains(err.Error(), "no backup percentage") {
		t.Errorf("want a missing-backup-price error, got %v", err)
	}
}

func TestEstimateErrorsNameFieldAndFix(t *testing.T) {
	c := fixture(t)
	tests := []struct {
		name   string
		change func(*Usage)
		want   []string
	}{
		{"unknown type", func(u *Usage) { u.Pools[1].ServerType = "cpx23" },
			[]string{"pools[1] (worker): serverType: server type cpx23 does not exist at Hetzner", "did you mean cpx22, cx23, ccx13?"}},
		{"not orderable", func(u *Usage) { u.Pools[0].ServerType = "cx23" },
			[]string{"pools[0] (controlplane): serverType: server type cx23 is not orderable in nbg1", "try cpx22 (2 vCPU, 4 GB RAM, 5.99 EUR/month in nbg1)"}},
		{"deprecated", func(u *Usage) { u.Pools[0].ServerType = "cpx21" },
			[]string{"cpx21 is deprecated by Hetzner", "try cpx32"}},
		{"only elsewhere", func(u *Usage) { u.Pools[1].ServerType = "ccx13" },
			[]string{"ccx13 is not orderable in nbg1", "try cpx32", "or keep ccx13 in ash"}},
		{"negative count", func(u *Usage) { u.Pools[0].Count = -1 }, []string{"pools[0] (controlplane): count -1 is negative"}},
		{"unknown lb", func(u *Usage) { u.LoadBalancers[0].Type = "lb99" },
			[]string{"loadBalancers[0] (ingress): type: unknown load balancer type \"lb99\"; use one of [lb11]"}},
		{"lb location", func(u *Usage) { u.LoadBalancers[0].Location = "hel1" },
			[]string{"loadBalancers[0] (ingress): location: load balancer type lb11 has no price in \"hel1\""}},
		{"bad snapshot", func(u *Usage) { u.Snapshots[0].SizeGB = -1 }, []string{"snapshots[0] (talos-amd64)"}},
		{"bad vat", func(u *Usage) { u.VATRate = "nineteen" }, []string{"VAT rate", "like 19.00"}},
		{"no ip price", func(u *Usage) { u.Pools[0].Location = "fsn1" }, []string{"no primary IPv4 price in fsn1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := seedUsage()
			tc.change(&u)
			_, err := c.Estimate(u)
			if err == nil {
				t.Fatal("want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	u := seedUsage()
	u.Pools[0].ServerType = "cx23"
	_, err := c.Estimate(u)
	var ste *ServerTypeError
	if !errors.As(err, &ste) || ste.Alternative != "cpx22" || ste.Location != "nbg1" {
		t.Errorf("want a *ServerTypeError with alternative cpx22, got %#v", ste)
	}
}

func TestCheckServerTypeAndArch(t *testing.T) {
	c := fixture(t)
	for _, ok := range [][3]string{{"cpx22", "nbg1", ""}, {"cpx22", "nbg1", "amd64"}, {"cpx22", "fsn1", "x86"}, {"cax11", "nbg1", "arm64"}} {
		if err := c.CheckServerType(ok[0], ok[1], ok[2]); err != nil {
			t.Errorf("CheckServerType%v: %v", ok, err)
		}
	}
	bad := map[[3]string]string{
		{"cpx22", "nbg1", "arm64"}: "server type cpx22 is amd64, but the pool needs arm64; try cax11",
		{"cax11", "nbg1", "amd64"}: "cax11 is arm64, but the pool needs amd64; try cpx22",
		{"cpx22", "xyz1", ""}:      "not a Hetzner location; use one of ash, fsn1, nbg1",
		{"cpx22", "nbg1", "mips"}:  "architecture \"mips\" is not one Hetzner offers",
		{"cax11", "fsn1", ""}:      "cax11 is not orderable in fsn1; no comparable type is orderable in fsn1; pick another location, or keep cax11 in nbg1",
	}
	for in, want := range bad {
		if err := c.CheckServerType(in[0], in[1], in[2]); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckServerType%v = %v; want ~%q", in, err, want)
		}
	}
	for name, want := range map[string]string{"cpx22": "amd64", "cax11": "arm64"} {
		if got, err := c.Arch(name); err != nil || got != want {
			t.Errorf("Arch(%s) = %q, %v; want %s", name, got, err, want)
		}
	}
	if _, err := c.Arch("nope"); err == nil {
		t.Error("Arch(nope): want an error")
	}
}

func TestWriteTable(t *testing.T) {
	e, err := fixture(t).Estimate(seedUsage())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteTable(&buf, e); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, w := range []string{"GROUP", "cpx22 server (nbg1)", "17.97", "21.38", "TOTAL (EUR)", "48.91", "58.21", "0.0769",
		"worker        subtotal", "- Hetzner bills by the hour up to the monthly cap", "- offline prices as of 2026-01-02"} {
		if !strings.Contains(out, w) {
			t.Errorf("table lacks %q:\n%s", w, out)
		}
	}
	lines := strings.Split(out, "\n")
	col := strings.Index(lines[0], "NET/MONTH")
	for _, l := range lines[1:3] {
		if len(l) <= col || l[col-2:col] != "  " {
			t.Errorf("columns not aligned at %d:\n%s", col, out)
		}
	}
}

func TestTotalsAreSumsOfRowCents(t *testing.T) {
	c := fixture(t)
	for n := 0; n < 40; n++ {
		u := seedUsage()
		u.Pools[0].Count, u.Pools[1].Count, u.Pools[1].VolumeGB = n, 2*n+1, n*7
		u.Snapshots[0].SizeGB = float64(n) * 0.37
		u.Backups = n%2 == 0
		e, err := c.Estimate(u)
		if err != nil {
			t.Fatal(err)
		}
		assertExactTotals(t, e)
	}
}

// assertExactTotals checks that totals are the exact sums of the rows' cents.
func assertExactTotals(t *testing.T, e Estimate) {
	t.Helper()
	var net, gross int64
	for _, r := range e.Rows {
		if r.MonthlyNet != r.MonthlyNet.RoundCents() || r.MonthlyGross != r.MonthlyGross.RoundCents() {
			t.Fatalf("row %+v is not rounded to cents", r)
		}
		net += r.MonthlyNet.Cents()
		gross += r.MonthlyGross.Cents()
	}
	if net != e.MonthlyNet.Cents() || gross != e.MonthlyGross.Cents() {
		t.Errorf("row cents sum to %d/%d, totals are %d/%d", net, gross, e.MonthlyNet.Cents(), e.MonthlyGross.Cents())
	}
	var gn, gg int64
	for _, g := range e.Groups {
		gn += g.MonthlyNet.Cents()
		gg += g.MonthlyGross.Cents()
	}
	if gn != net || gg != gross {
		t.Errorf("groups sum to %d/%d, rows to %d/%d", gn, gg, net, gross)
	}
}

// containsNote reports whether some note contains s.
func containsNote(notes []string, s string) bool {
	for _, n := range notes {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

func BenchmarkCostRecompute(b *testing.B) {
	c := fixture(b)
	u := seedUsage()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		u.Pools[1].Count = 1 + i%5
		if _, err := c.Estimate(u); err != nil {
			b.Fatal(err)
		}
	}
}
