package hcloudfake_test

import (
	"testing"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/hcloudfake"
)

func TestPricingParses(t *testing.T) {
	e := newEnv(t, hcloudfake.Options{})
	p, _, err := e.client.Pricing.Get(ctx(t))
	if err != nil {
		t.Fatalf("pricing: %v", err)
	}
	if p.Image.PerGBMonth.Currency != "EUR" || p.Image.PerGBMonth.VATRate != "19.00" {
		t.Errorf("currency/vat = %q/%q", p.Image.PerGBMonth.Currency, p.Image.PerGBMonth.VATRate)
	}
	find := func(name, loc string) hcloud.ServerTypeLocationPricing {
		for _, st := range p.ServerTypes {
			if st.ServerType.Name == name {
				for _, lp := range st.Pricings {
					if lp.Location.Name == loc {
						return lp
					}
				}
			}
		}
		t.Fatalf("no price for %s in %s", name, loc)
		return hcloud.ServerTypeLocationPricing{}
	}
	if got := find("cpx22", "fsn1").Monthly; got.Net != "7.9900000000" || got.Gross != "9.5081000000" {
		t.Errorf("cpx22 fsn1 monthly = %+v", got)
	}
	if got := find("cax11", "hel1").Monthly.Net; got != "4.4900000000" {
		t.Errorf("cax11 monthly net = %s", got)
	}
	if got := find("cx23", "nbg1").Hourly.Net; got != "0.0055000000" {
		t.Errorf("cx23 hourly net = %s", got)
	}
	var lb11 string
	for _, lt := range p.LoadBalancerTypes {
		if lt.LoadBalancerType.Name == "lb11" {
			lb11 = lt.Pricings[0].Monthly.Net
		}
	}
	if lb11 != "7.4900000000" { // the 2026-04-01 list, assets/pricing
		t.Errorf("lb11 monthly net = %q", lb11)
	}
	var ipv4 string
	for _, pip := range p.PrimaryIPs {
		if pip.Type == "ipv4" {
			ipv4 = pip.Pricings[0].Monthly.Net
		}
	}
	if ipv4 != "0.5000000000" {
		t.Errorf("primary ipv4 monthly net = %q", ipv4)
	}
}

func TestCatalog(t *testing.T) {
	_, c := newPlainEnv(t)
	types, err := c.ServerType.All(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*hcloud.ServerType{}
	for _, st := range types {
		byName[st.Name] = st
	}
	for _, name := range []string{"cx23", "cx33", "cx43", "cx53", "cpx11", "cpx22", "cpx32", "cpx42", "cpx52", "cax11", "cax41", "ccx13"} {
		if byName[name] == nil {
			t.Errorf("server type %s missing", name)
		}
	}
	if st := byName["cax11"]; st.Architecture != hcloud.ArchitectureARM || st.Cores != 2 || st.Memory != 4 || st.Disk != 40 {
		t.Errorf("cax11 = %+v", st)
	}
	cpx11 := byName["cpx11"]
	for _, l := range cpx11.Locations {
		eu := l.Location.Name == "fsn1" || l.Location.Name == "nbg1" || l.Location.Name == "hel1"
		if eu == l.IsDeprecated() {
			continue
		}
		t.Errorf("cpx11 in %s: deprecated=%v", l.Location.Name, l.IsDeprecated())
	}
	if !byName["cx22"].IsDeprecated() {
		t.Error("cx22 should be deprecated")
	}
	st, _, err := c.ServerType.GetByName(ctx(t), "cpx32")
	if err != nil || st == nil || st.Cores != 4 {
		t.Errorf("GetByName cpx32 = %+v, %v", st, err)
	}

	locs, err := c.Location.All(ctx(t))
	if err != nil || len(locs) != 6 {
		t.Fatalf("locations = %d, %v", len(locs), err)
	}
	fsn1, _, _ := c.Location.GetByName(ctx(t), "fsn1")
	if fsn1 == nil || fsn1.NetworkZone != hcloud.NetworkZoneEUCentral {
		t.Errorf("fsn1 = %+v", fsn1)
	}
	dcs, err := c.Datacenter.All(ctx(t))
	if err != nil || len(dcs) != 6 || len(dcs[0].ServerTypes.Available) == 0 {
		t.Errorf("datacenters = %d, %v", len(dcs), err)
	}
	lbt, _, err := c.LoadBalancerType.GetByName(ctx(t), "lb11")
	if err != nil || lbt == nil || lbt.MaxTargets != 25 {
		t.Errorf("lb11 = %+v, %v", lbt, err)
	}
	img, _, err := c.Image.GetForArchitecture(ctx(t), "debian-12", hcloud.ArchitectureARM)
	if err != nil || img == nil || img.Architecture != hcloud.ArchitectureARM || img.Type != hcloud.ImageTypeSystem {
		t.Errorf("debian-12 arm = %+v, %v", img, err)
	}
}
