package pricing

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/assets"
)

func TestOfflineCatalog(t *testing.T) {
	c := offline(t)
	if c.Live || c.AsOf == "" || len(c.Sources) == 0 || c.Currency != "EUR" || c.VATRate != "19.00" {
		t.Fatalf("offline catalog metadata: live=%v asOf=%q sources=%d currency=%q vat=%q", c.Live, c.AsOf, len(c.Sources), c.Currency, c.VATRate)
	}
	if want := "offline prices as of " + c.AsOf + " (Hetzner price list)"; c.Label() != want {
		t.Errorf("label %q, want %q", c.Label(), want)
	}
	if _, err := time.Parse(time.DateOnly, c.AsOf); err != nil {
		t.Errorf("as_of %q is not a date: %v", c.AsOf, err)
	}
	for _, name := range strings.Fields("cpx22 cpx32 cpx42 cpx52 cpx62 cx23 cx33 cx43 cx53 cax11 cax21 cax31 cax41 ccx13 ccx23 ccx33 ccx43 ccx53 ccx63") {
		st, ok := c.ServerTypes[name]
		if !ok {
			t.Errorf("offline catalog lacks %s", name)
			continue
		}
		if _, err := c.Arch(name); err != nil || st.Cores == 0 || st.MemoryGB == 0 {
			t.Errorf("%s lacks details: %+v (%v)", name, st, err)
		}
		for loc, p := range st.Prices {
			if p.Monthly <= 0 || p.Hourly <= 0 || p.Hourly > p.Monthly {
				t.Errorf("%s in %s: implausible price %+v", name, loc, p)
			}
			// Gross in the snapshot is net x 1.19, exactly.
			if g := st.GrossPrices[loc].Monthly; g != p.Monthly+mustRate(t, "19").of(p.Monthly) {
				t.Errorf("%s in %s: gross %s is not net %s + 19 %%", name, loc, g, p.Monthly)
			}
		}
	}
	if got := strings.Join(c.Locations(), " "); got != "ash fsn1 hel1 hil nbg1 sin" {
		t.Errorf("locations %q", got)
	}
	if err := c.CheckServerType("cax11", "nbg1", "arm64"); err != nil {
		t.Errorf("cax11 in nbg1: %v", err)
	}
	if err := c.CheckServerType("cpx22", "ash", ""); err == nil || !strings.Contains(err.Error(), "not orderable in ash") {
		t.Errorf("cpx22 in ash: want not orderable, got %v", err)
	}
}

// TestOfflineSeedClusterCost: the field notes' "about 50 EUR/month" was
// 2025's; on the list in force from 2026-04-01 the seed costs 61.94 net
// (3 x cpx22 7.99, 2 x cpx32 13.99, lb11 7.49, 5 primary IPv4 0.50).
func TestOfflineSeedClusterCost(t *testing.T) {
	c := offline(t)
	u := Usage{
		Pools: []PoolUsage{
			{Name: "controlplane", ServerType: "cpx22", Location: "nbg1", Count: 3, PublicIPv4: true, PublicIPv6: true},
			{Name: "worker", ServerType: "cpx32", Location: "nbg1", Count: 2, PublicIPv4: true, PublicIPv6: true},
		},
		LoadBalancers: []LBUsage{{Name: "ingress", Type: "lb11", Location: "nbg1"}},
	}
	e, err := c.Estimate(u)
	if err != nil {
		t.Fatal(err)
	}
	if e.MonthlyNet != mustMoney(t, "61.94") {
		t.Errorf("seed cluster costs %s EUR/month net, want 61.94", e.MonthlyNet)
	}
	if lb := e.Rows[len(e.Rows)-1]; lb.MonthlyNet.String() != "7.49" {
		t.Errorf("lb11 row %+v, want 7.49", lb)
	}
	assertExactTotals(t, e)
	t.Logf("seed cluster: %s EUR/month net, %s gross, %s EUR/hour net", e.MonthlyNet, e.MonthlyGross, e.HourlyNet.Format(4))
}

// mustRate parses a percentage in a test.
func mustRate(t testing.TB, s string) rate {
	t.Helper()
	r, err := parseRate(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// fakeHetzner serves GET /pricing and GET /server_types from the embedded
// snapshot, as the real API would, and checks the token it sees; it
// returns a client of it with that token.
func fakeHetzner(t *testing.T, status int) *hcloud.Client {
	t.Helper()
	files := map[string]string{"/pricing": offlinePricingFile, "/server_types": offlineServerTypesFile}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer test-token" {
			t.Errorf("request %s without the token", r.URL)
		}
		w.Header().Set("Content-Type", "application/json")
		if status != http.StatusOK {
			w.WriteHeader(status)
			_, _ = w.Write([]byte(`{"error":{"code":"unauthorized","message":"unable to authenticate"}}`))
			return
		}
		name, ok := files[r.URL.Path]
		if !ok || r.Method != http.MethodGet {
			http.NotFound(w, r)
			return
		}
		body, err := assets.Pricing.ReadFile(name)
		if err != nil {
			t.Errorf("read %s: %v", name, err)
		}
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return hcloud.NewClient(hcloud.WithEndpoint(srv.URL), hcloud.WithToken("test-token"))
}

// testCtx is a context that ends after 10 seconds or with the test.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestFromAPI(t *testing.T) {
	client, ctx := fakeHetzner(t, http.StatusOK), testCtx(t)
	live, err := FromAPI(ctx, client)
	if err != nil {
		t.Fatal(err)
	}
	off := offline(t)
	if !live.Live || live.Label() != "live prices from the Hetzner API" || live.AsOf != time.Now().UTC().Format(time.DateOnly) {
		t.Errorf("live catalog metadata: live=%v label=%q asOf=%q", live.Live, live.Label(), live.AsOf)
	}
	if !reflect.DeepEqual(live.ServerTypes, off.ServerTypes) {
		t.Errorf("server types through the API differ from the same JSON read offline")
	}
	// hcloud-go's own decoder must accept the snapshot too (a fake API may
	// serve these files to code that calls client.Pricing.Get).
	if p, _, err := client.Pricing.Get(ctx); err != nil || len(p.ServerTypes) != len(off.ServerTypes) {
		t.Errorf("hcloud Pricing.Get on the snapshot: %d types, %v", len(p.ServerTypes), err)
	}
	if !reflect.DeepEqual(live.LoadBalancerTypes, off.LoadBalancerTypes) || !reflect.DeepEqual(live.PrimaryIPv4, off.PrimaryIPv4) ||
		live.VolumeGBMonth != off.VolumeGBMonth || live.ImageGBMonth != off.ImageGBMonth || live.BackupPercent != off.BackupPercent {
		t.Errorf("prices through the API differ from the same JSON read offline")
	}
}

func TestFromAPIUnauthorized(t *testing.T) {
	client, ctx := fakeHetzner(t, http.StatusUnauthorized), testCtx(t)
	_, err := FromAPI(ctx, client)
	if err == nil || !strings.Contains(err.Error(), "GET /pricing") || !strings.Contains(err.Error(), "offline prices") {
		t.Fatalf("want an operator-facing error naming GET /pricing, got %v", err)
	}
	if strings.Contains(err.Error(), "test-token") {
		t.Fatal("the error leaks the token")
	}
}
