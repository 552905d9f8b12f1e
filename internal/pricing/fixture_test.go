package pricing

import "testing"

// mustMoney parses a price in a test fixture.
func mustMoney(t testing.TB, s string) Money {
	t.Helper()
	m, err := ParseMoney(s)
	if err != nil {
		t.Fatalf("ParseMoney(%q): %v", s, err)
	}
	return m
}

// fixture is a small catalog with round, known prices (net, EUR):
// cpx22 5.99, cpx32 10.49, cax11 3.29 in nbg1; cpx21 deprecated; cx23 sold
// out in nbg1; ccx13 only in ash; lb11 6.57; IPv4 0.50; volume 0.044/GB;
// image 0.011/GB; backups 20 %; VAT 19 %.
func fixture(t testing.TB) *Catalog {
	t.Helper()
	p := func(monthly, hourly string) Price {
		return Price{Monthly: mustMoney(t, monthly), Hourly: mustMoney(t, hourly)}
	}
	st := func(name, arch string, cores int, mem float64, deprecated bool, prices map[string]Price, avail map[string]bool) ServerType {
		traffic := map[string]float64{}
		for loc := range prices {
			traffic[loc] = 20
		}
		return ServerType{Name: name, Architecture: arch, Cores: cores, MemoryGB: mem, DiskGB: 40, CPUType: "shared",
			Deprecated: deprecated, Prices: prices, GrossPrices: map[string]Price{}, Available: avail,
			IncludedTrafficTB: 20, TrafficTB: traffic}
	}
	return &Catalog{
		Currency: "EUR", VATRate: "19.00", AsOf: "2026-01-02",
		ServerTypes: map[string]ServerType{
			"cpx22": st("cpx22", "x86", 2, 4, false, map[string]Price{"nbg1": p("5.99", "0.0096"), "fsn1": p("5.99", "0.0096")}, map[string]bool{"nbg1": true, "fsn1": true}),
			"cpx32": st("cpx32", "x86", 4, 8, false, map[string]Price{"nbg1": p("10.49", "0.0168")}, map[string]bool{"nbg1": true}),
			"cax11": st("cax11", "arm", 2, 4, false, map[string]Price{"nbg1": p("3.29", "0.0053")}, map[string]bool{"nbg1": true}),
			"cpx21": st("cpx21", "x86", 3, 4, true, map[string]Price{"nbg1": p("8.99", "0.0145")}, map[string]bool{"nbg1": false}),
			"cx23":  st("cx23", "x86", 2, 4, false, map[string]Price{"nbg1": p("2.99", "0.0048")}, map[string]bool{"nbg1": false}),
			"ccx13": st("ccx13", "x86", 2, 8, false, map[string]Price{"ash": p("12.99", "0.0209")}, map[string]bool{"ash": true}),
		},
		LoadBalancerTypes: map[string]LoadBalancerType{
			"lb11": {Name: "lb11", Prices: map[string]Price{"nbg1": p("6.57", "0.0105")}, TrafficTB: map[string]float64{"nbg1": 20}},
		},
		PrimaryIPv4:   map[string]Price{"nbg1": p("0.50", "0.0008")},
		PrimaryIPv6:   map[string]Price{"nbg1": p("0", "0")},
		VolumeGBMonth: mustMoney(t, "0.044"),
		ImageGBMonth:  mustMoney(t, "0.011"),
		BackupPercent: "20.00",
	}
}

// seedUsage is the field notes' cluster: 3 x cpx22 control planes, 2 x cpx32
// workers with a 10 GB volume each, IPv4+IPv6 per server, one lb11 in nbg1
// and a 0.5 GB Talos snapshot.
func seedUsage() Usage {
	return Usage{
		Pools: []PoolUsage{
			{Name: "controlplane", ServerType: "cpx22", Location: "nbg1", Count: 3, PublicIPv4: true, PublicIPv6: true},
			{Name: "worker", ServerType: "cpx32", Location: "nbg1", Count: 2, VolumeGB: 10, PublicIPv4: true, PublicIPv6: true},
		},
		LoadBalancers: []LBUsage{{Name: "ingress", Type: "lb11", Location: "nbg1"}},
		Snapshots:     []SnapshotUsage{{Name: "talos-amd64", SizeGB: 0.5}},
	}
}

// offline is the offline catalog; the test stops when it does not load.
func offline(t testing.TB) *Catalog {
	t.Helper()
	c, err := Offline()
	if err != nil {
		t.Fatal(err)
	}
	return c
}
