package main

import (
	"encoding/json"
	"regexp"
	"testing"
)

var (
	goFieldName = regexp.MustCompile(`"[A-Z][A-Za-z]*":`)
	jsonAmount  = regexp.MustCompile(`^\d+\.\d{4}$`)
)

// decodeDoc checks that out is one JSON document with snake_case keys.
func decodeDoc(t *testing.T, out string) map[string]any {
	t.Helper()
	if m := goFieldName.FindString(out); m != "" {
		t.Errorf("Go field name %s in:\n%s", m, out)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not one JSON document: %v\n%s", err, out)
	}
	if doc["schema_version"] != float64(1) {
		t.Errorf("schema_version = %v", doc["schema_version"])
	}
	return doc
}

func checkMoney(t *testing.T, where string, doc map[string]any) {
	t.Helper()
	for _, k := range []string{"monthly_net", "monthly_gross", "hourly_net"} {
		if v, ok := doc[k].(string); !ok || !jsonAmount.MatchString(v) {
			t.Errorf("%s.%s = %#v, want a decimal string in euros like \"48.0400\"", where, k, doc[k])
		}
	}
	if doc["currency"] != "EUR" || doc["vat_rate"] == nil {
		t.Errorf("%s: currency %v, vat_rate %v", where, doc["currency"], doc["vat_rate"])
	}
}

func TestCostAndPlanJSON(t *testing.T) {
	_, cfg := seedConfig(t)
	out, err := run(t, "cost", "--json", "--vat", "19", "--config", cfg)
	if err != nil {
		t.Fatalf("cost: %v\n%s", err, out)
	}
	cost := decodeDoc(t, out)
	checkMoney(t, "cost", cost)
	if cost["vat_rate"] != "19.00" || cost["cluster"] != "demo" {
		t.Errorf("cost: vat_rate %v cluster %v", cost["vat_rate"], cost["cluster"])
	}
	if rows, _ := cost["rows"].([]any); len(rows) == 0 {
		t.Error("cost has no rows")
	}

	out, err = run(t, "plan", "--json", "--config", cfg)
	if err != nil {
		t.Fatalf("plan: %v\n%s", err, out)
	}
	plan := decodeDoc(t, out)
	steps, _ := plan["steps"].([]any)
	if len(steps) != 10 { // secrets .. bootstrap, addons, scale-down, upgrade
		t.Fatalf("plan has %d steps", len(steps))
	}
	first := steps[0].(map[string]any)
	if first["name"] == "" || first["title"] == "" || first["status"] != "pending" {
		t.Errorf("first step = %v", first)
	}
	c, ok := plan["cost"].(map[string]any)
	if !ok {
		t.Fatalf("plan has no cost: %v", plan["cost"])
	}
	checkMoney(t, "plan.cost", c)
	for _, k := range []string{"findings", "problems"} {
		if _, ok := plan[k].([]any); !ok {
			t.Errorf("plan.%s = %#v, want a list", k, plan[k])
		}
	}
}
