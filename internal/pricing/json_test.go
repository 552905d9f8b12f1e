package pricing

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

func TestJSONAmountAndVATRate(t *testing.T) {
	amounts := []struct {
		m    Money
		want string
	}{
		{48_040_000, "48.0400"},
		{10_400, "0.0104"},
		{10_450, "0.0105"},
		{0, "0.0000"},
		{-500_000, "-0.5000"},
	}
	for _, c := range amounts {
		if got := JSONAmount(c.m); got != c.want {
			t.Errorf("JSONAmount(%d) = %q, want %q", c.m, got, c.want)
		}
	}
	rates := map[string]string{"19": "19.00", "19.00": "19.00", "8.1": "8.10", "0": "0.00", "x": "x"}
	for in, want := range rates {
		if got := vatRateJSON(in); got != want {
			t.Errorf("vatRateJSON(%q) = %q, want %q", in, got, want)
		}
	}
}

var goName = regexp.MustCompile(`"[A-Z][A-Za-z]*":`)

// TestEstimateJSONShape checks the documented shape: snake_case keys,
// amounts as decimal strings, currency, VAT rate and the price source.
func TestEstimateJSONShape(t *testing.T) {
	cat := offline(t)
	est, err := cat.Estimate(Usage{
		Pools:         []PoolUsage{{Name: "controlplane", ServerType: "cpx22", Location: "nbg1", Count: 3, PublicIPv4: true}},
		LoadBalancers: []LBUsage{{Name: "ingress load balancer", Type: "lb11", Location: "nbg1"}},
		VATRate:       "19",
	})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(est.JSON())
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if m := goName.FindString(s); m != "" {
		t.Errorf("Go field name %s in %s", m, s)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	amount := regexp.MustCompile(`^-?\d+\.\d{4}$`)
	for _, k := range []string{"monthly_net", "monthly_gross", "hourly_net"} {
		v, ok := doc[k].(string)
		if !ok || !amount.MatchString(v) {
			t.Errorf("%s = %#v, want a decimal string with 4 decimals", k, doc[k])
		}
	}
	if doc["currency"] != "EUR" || doc["vat_rate"] != "19.00" {
		t.Errorf("currency %v, vat_rate %v", doc["currency"], doc["vat_rate"])
	}
	src, _ := doc["price_source"].(map[string]any)
	if src["live"] != false || src["as_of"] == "" || !strings.Contains(src["label"].(string), "offline") {
		t.Errorf("price_source = %v", src)
	}
	rows, _ := doc["rows"].([]any)
	if len(rows) != len(est.Rows) {
		t.Fatalf("rows %d, want %d", len(rows), len(est.Rows))
	}
	first := rows[0].(map[string]any)
	if first["monthly_net"] != JSONAmount(est.Rows[0].MonthlyNet) || first["unit_monthly_net"] != JSONAmount(est.Rows[0].UnitMonthly) {
		t.Errorf("row 0 = %v", first)
	}
}
