package pricing

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/hcloudfake"
)

// TestOfflinePricesWarnWhenOld: the offline snapshot's date is in the
// estimate (text and JSON); past 90 days it carries a warning.
func TestOfflinePricesWarnWhenOld(t *testing.T) {
	c := offline(t)
	asOf, err := time.Parse(time.DateOnly, c.AsOf)
	if err != nil {
		t.Fatal(err)
	}
	u := Usage{Pools: []PoolUsage{{Name: "worker", ServerType: "cpx22", Location: "nbg1", Count: 1}}}
	for _, c2 := range []struct {
		now  time.Time
		warn bool
	}{{asOf.AddDate(0, 0, 90), false}, {asOf.AddDate(0, 0, 91), true}, {asOf.AddDate(0, 0, 244), true}} {
		u.Now = c2.now
		e, err := c.Estimate(u)
		if err != nil {
			t.Fatal(err)
		}
		if (e.Warning != "") != c2.warn {
			t.Errorf("%s: warning %q, want one: %v", c2.now.Format(time.DateOnly), e.Warning, c2.warn)
		}
		j := e.JSON()
		if j.PriceSource.AsOf != c.AsOf || j.PriceSource.Warning != e.Warning {
			t.Errorf("JSON price source %+v", j.PriceSource)
		}
		var b strings.Builder
		if err := WriteTable(&b, e); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "offline prices as of "+c.AsOf) || strings.Contains(b.String(), "warning: ") != c2.warn {
			t.Errorf("table:\n%s", b.String())
		}
	}
	if w := c.StaleWarning(asOf.AddDate(0, 0, 244)); !strings.Contains(w, "244 days ago") || !strings.Contains(w, c.AsOf) {
		t.Errorf("warning %q", w)
	}
	live := *c
	live.Live = true
	if w := live.StaleWarning(asOf.AddDate(1, 0, 0)); w != "" {
		t.Errorf("live prices warned: %q", w)
	}
}

// TestOfflineSnapshotIsThe2026List: the snapshot is Hetzner's list in force
// from 2026-04-01, the one the sandbox serves: cpx22 7.99 net in nbg1 (the
// 2025-10-21 list said 5.99).
func TestOfflineSnapshotIsThe2026List(t *testing.T) {
	c := offline(t)
	if c.AsOf != "2026-04-01" {
		t.Errorf("as of %s", c.AsOf)
	}
	for name, want := range map[string]string{"cpx22": "7.99", "cpx32": "13.99", "cx23": "3.99", "cax11": "4.49", "ccx13": "15.99"} {
		if got := c.ServerTypes[name].Prices["nbg1"].Monthly.String(); got != want {
			t.Errorf("%s in nbg1: %s, want %s", name, got, want)
		}
	}
	if got := c.LoadBalancerTypes["lb11"].Prices["nbg1"].Monthly.String(); got != "7.49" {
		t.Errorf("lb11: %s", got)
	}
	if got := c.VolumeGBMonth.Format(4); got != "0.0572" {
		t.Errorf("volume: %s", got)
	}
}

// TestSandboxServesTheOfflineList: the sandbox's GET /pricing and the
// offline snapshot come from the same dated file, so every price they both
// have agrees (issue 22 item 4: they said 7.99 and 5.99 for cpx22).
func TestSandboxServesTheOfflineList(t *testing.T) {
	fake := hcloudfake.New(hcloudfake.Options{Token: "t"})
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	live, err := FromAPI(testCtx(t), hcloud.NewClient(hcloud.WithEndpoint(srv.URL), hcloud.WithToken("t")))
	if err != nil {
		t.Fatal(err)
	}
	off := offline(t)
	compared := 0
	for name, ost := range off.ServerTypes {
		for loc, op := range ost.Prices {
			if lp, ok := live.ServerTypes[name].Prices[loc]; ok {
				compared++
				if lp.Monthly != op.Monthly {
					t.Errorf("%s in %s: sandbox %s, offline %s", name, loc, lp.Monthly, op.Monthly)
				}
			}
		}
	}
	if compared < 40 {
		t.Errorf("only %d prices compared", compared)
	}
	if l, o := live.LoadBalancerTypes["lb11"].Prices["nbg1"].Monthly, off.LoadBalancerTypes["lb11"].Prices["nbg1"].Monthly; l != o {
		t.Errorf("lb11: sandbox %s, offline %s", l, o)
	}
	if live.VolumeGBMonth != off.VolumeGBMonth || live.PrimaryIPv4["nbg1"].Monthly != off.PrimaryIPv4["nbg1"].Monthly {
		t.Errorf("volume %s/%s, ipv4 %s/%s", live.VolumeGBMonth, off.VolumeGBMonth, live.PrimaryIPv4["nbg1"].Monthly, off.PrimaryIPv4["nbg1"].Monthly)
	}
}
