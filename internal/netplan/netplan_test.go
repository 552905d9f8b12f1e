package netplan

import (
	"reflect"
	"strings"
	"testing"
)

// seed is the default layout of the field notes: it must be clean.
func seed() Layout {
	return Layout{
		Network:      "10.0.0.0/16",
		NetworkField: "network.cidr",
		Pods:         "10.42.0.0/16",
		Services:     "10.43.0.0/16",
		Subnets: []Subnet{
			{Field: "controlPlane.subnet", Name: "controlplane", CIDR: "10.0.1.0/24", Count: 3},
			{Field: "pools[0].subnet", Name: "worker", CIDR: "10.0.2.0/24", Count: 2},
			{Field: "pools[1].subnet", Name: "storage", CIDR: "10.0.3.0/24", Count: 1},
		},
		VIP: "10.0.1.100",
	}
}

func TestValidateSeedIsClean(t *testing.T) {
	if got := Validate(seed()); len(got) != 0 {
		t.Fatalf("seed layout: want no findings, got %+v", got)
	}
	native := seed()
	native.Network = "10.0.0.0/8"
	native.NativeRouting = true
	if got := Validate(native); len(got) != 0 {
		t.Fatalf("native routing with pods inside 10.0.0.0/8: want no findings, got %+v", got)
	}
}

// want describes one expected finding; msg and fix are substrings.
type want struct {
	field string
	sev   Severity
	msg   string
	fix   string
}

func TestValidateRules(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Layout)
		want   []want
	}{
		{"network not a CIDR", func(l *Layout) { l.Network = "10.0.0.0" },
			[]want{{"network.cidr", SeverityError, `"10.0.0.0" is not a CIDR range`, "10.0.0.0/16"}}},
		{"network empty", func(l *Layout) { l.Network = "" },
			[]want{{"network.cidr", SeverityError, "is empty", "10.0.0.0/16"}}},
		{"network host bits", func(l *Layout) { l.Network = "10.0.5.0/16" },
			[]want{{"network.cidr", SeverityError, "host bits set", "use 10.0.0.0/16"}}},
		{"network IPv6", func(l *Layout) { l.Network = "fd00::/48" },
			[]want{{"network.cidr", SeverityError, "only support IPv4", "10.0.0.0/16"}}},
		{"network public", func(l *Layout) {
			l.Network = "100.0.0.0/16"
			l.Subnets = []Subnet{{Field: "controlPlane.subnet", CIDR: "100.0.1.0/24", Count: 3}}
			l.VIP = ""
		}, []want{{"network.cidr", SeverityError, "RFC1918", "10.0.0.0/16"}}},
		{"network too small", func(l *Layout) {
			l.Network = "10.0.1.0/25"
			l.Subnets = []Subnet{{Field: "controlPlane.subnet", CIDR: "10.0.1.0/26", Count: 3}}
			l.VIP = ""
		}, []want{{"network.cidr", SeverityError, "minimum network size is /24", "use 10.0.0.0/16"}}},
		{"network overlaps docker", func(l *Layout) {
			l.Network = "172.16.0.0/12"
			l.Subnets = []Subnet{{Field: "controlPlane.subnet", CIDR: "172.16.1.0/24", Count: 3}}
			l.VIP = ""
		}, []want{{"network.cidr", SeverityWarning, "172.17.0.0/16", "10.0.0.0/16"}}},
		{"subnet outside network", func(l *Layout) { l.Subnets[1].CIDR = "10.1.2.0/24" },
			[]want{{"pools[0].subnet", SeverityError, "outside the network 10.0.0.0/16", "use 10.0.0.0/24"}}},
		{"subnets overlap", func(l *Layout) { l.Subnets[2].CIDR = "10.0.2.0/24" },
			[]want{{"pools[1].subnet", SeverityError, "overlaps the subnet of pool worker 10.0.2.0/24", "use 10.0.0.0/24"}}},
		{"subnet overlap suggestion skips used blocks", func(l *Layout) {
			l.Subnets = append([]Subnet{{Field: "x", CIDR: "10.0.0.0/24"}}, l.Subnets...)
			l.Subnets[0], l.Subnets[1] = l.Subnets[1], l.Subnets[0]
			l.Subnets[3].CIDR = "10.0.1.0/25"
		}, []want{{"pools[1].subnet", SeverityError, "overlaps the subnet of pool controlplane", "use 10.0.3.0/25"}}},
		{"subnet not a CIDR", func(l *Layout) { l.Subnets[1].CIDR = "10.0.2.0/33" },
			[]want{{"pools[0].subnet", SeverityError, `"10.0.2.0/33" is not a CIDR range`, "10.0.1.0/24"}}},
		{"subnet IPv6", func(l *Layout) { l.Subnets[1].CIDR = "fd00::/64" },
			[]want{{"pools[0].subnet", SeverityError, "only support IPv4", "use 10.0.0.0/24"}}},
		{"pods overlap a subnet", func(l *Layout) { l.Pods = "10.0.0.0/16" },
			[]want{
				{"network.pods", SeverityError, "overlaps the subnet of pool controlplane", "use 10.1.0.0/16"},
				{"network.pods", SeverityError, "overlaps the subnet of pool worker", "use 10.1.0.0/16"},
				{"network.pods", SeverityError, "overlaps the subnet of pool storage", "use 10.1.0.0/16"},
			}},
		{"pods and services overlap", func(l *Layout) { l.Services = "10.42.128.0/17" },
			[]want{{"network.services", SeverityError, "overlaps the pod range 10.42.0.0/16", "use 10.1.0.0/17"}}},
		{"pods in tailscale range", func(l *Layout) { l.Pods = "100.64.0.0/16" },
			[]want{{"network.pods", SeverityError, "Tailscale", "use 10.1.0.0/16"}}},
		{"services in tailscale range", func(l *Layout) { l.Services = "100.100.0.0/16" },
			[]want{{"network.services", SeverityError, "100.64.0.0/10", "use 10.1.0.0/16"}}},
		{"services overlap docker", func(l *Layout) { l.Services = "172.17.0.0/16" },
			[]want{{"network.services", SeverityWarning, "Docker", "use 10.1.0.0/16"}}},
		{"services empty", func(l *Layout) { l.Services = "" },
			[]want{{"network.services", SeverityError, "service range is empty", "10.43.0.0/16"}}},
		{"native routing needs pods in network", func(l *Layout) { l.NativeRouting = true; l.Network = "10.0.0.0/12" },
			[]want{{"network.pods", SeverityError, "only deliver to destinations inside the network's range", "use 10.1.0.0/16"}}},
		{"native routing, network full", func(l *Layout) {
			l.NativeRouting = true
			l.Network = "10.0.0.0/22"
			l.Subnets = []Subnet{{Field: "controlPlane.subnet", Name: "controlplane", CIDR: "10.0.1.0/24", Count: 3}}
		}, []want{{"network.pods", SeverityError, "outside the network 10.0.0.0/22", "widen network.cidr"}}},
		{"native routing pods overlap subnet suggest inside network", func(l *Layout) {
			l.NativeRouting = true
			l.Network = "10.0.0.0/8"
			l.Pods = "10.0.0.0/16"
		}, []want{
			{"network.pods", SeverityError, "subnet of pool controlplane", "use 10.1.0.0/16 (the next free /16 in 10.0.0.0/8)"},
			{"network.pods", SeverityError, "subnet of pool worker", "use 10.1.0.0/16"},
			{"network.pods", SeverityError, "subnet of pool storage", "use 10.1.0.0/16"},
		}},
		{"vip not an address", func(l *Layout) { l.VIP = "10.0.1.300" },
			[]want{{"controlPlane.vip", SeverityError, `"10.0.1.300" is not an IPv4 address`, "use 10.0.1.254"}}},
		{"vip outside control-plane subnet", func(l *Layout) { l.VIP = "10.0.2.100" },
			[]want{{"controlPlane.vip", SeverityError, "outside the control-plane subnet 10.0.1.0/24", "use 10.0.1.254"}}},
		{"vip is network address", func(l *Layout) { l.VIP = "10.0.1.0" },
			[]want{{"controlPlane.vip", SeverityError, "network address", "use 10.0.1.254"}}},
		{"vip is gateway", func(l *Layout) { l.VIP = "10.0.1.1" },
			[]want{{"controlPlane.vip", SeverityError, "gateway", "use 10.0.1.254"}}},
		{"vip is broadcast", func(l *Layout) { l.VIP = "10.0.1.255" },
			[]want{{"controlPlane.vip", SeverityError, "broadcast", "use 10.0.1.254"}}},
		{"subnet smaller than hetzner's /30", func(l *Layout) { l.Subnets[1].CIDR = "10.0.2.0/31"; l.Subnets[1].Count = 1 },
			[]want{{"pools[0].subnet", SeverityError, "minimum subnet size is /30", "use 10.0.0.0/24"}}},
		{"network in the shared address space", func(l *Layout) {
			l.Network = "100.64.0.0/10"
			l.Subnets = []Subnet{{Field: "controlPlane.subnet", Name: "controlplane", CIDR: "100.64.1.0/24", Count: 3}}
			l.VIP = "100.64.1.100"
		}, []want{{"network.cidr", SeverityError, "RFC1918", "10.0.0.0/8"}}},
		{"subnet too small", func(l *Layout) { l.Subnets[1].CIDR = "10.0.2.0/30"; l.Subnets[1].Count = 2 },
			[]want{{"pools[0].subnet", SeverityError, "has 1 usable addresses", "use 10.0.0.0/29"}}},
		{"control-plane subnet counts the VIP", func(l *Layout) {
			l.Subnets[0].CIDR = "10.0.1.0/29"
			l.Subnets[0].Count = 5
			l.VIP = "10.0.1.6"
		}, []want{{"controlPlane.subnet", SeverityError, "needs 6: 5 servers plus the VIP", "use 10.0.0.0/28"}}},
		{"everything at once, in order", func(l *Layout) {
			l.Network = "bad"
			l.Pods = "100.64.0.0/16"
			l.VIP = "10.0.1.1"
		}, []want{
			{"network.cidr", SeverityError, "not a CIDR", ""},
			{"network.pods", SeverityError, "Tailscale", ""},
			{"controlPlane.vip", SeverityError, "gateway", ""},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := seed()
			tc.change(&l)
			got := Validate(l)
			if len(got) != len(tc.want) {
				t.Fatalf("want %d findings, got %d: %+v", len(tc.want), len(got), got)
			}
			for i, w := range tc.want {
				g := got[i]
				if g.Field != w.field || g.Severity != w.sev ||
					!strings.Contains(g.Message, w.msg) || !strings.Contains(g.Fix, w.fix) {
					t.Errorf("finding %d:\n got  %+v\n want field=%s sev=%s msg~%q fix~%q", i, g, w.field, w.sev, w.msg, w.fix)
				}
				if g.Message == "" || g.Fix == "" {
					t.Errorf("finding %d must carry a reason and a fix: %+v", i, g)
				}
			}
			if again := Validate(l); !reflect.DeepEqual(got, again) {
				t.Errorf("Validate is not deterministic:\n%+v\n%+v", got, again)
			}
		})
	}
}

func TestNextFreeSubnet(t *testing.T) {
	tests := []struct {
		network string
		used    []string
		prefix  int
		want    string
		wantErr string
	}{
		{"10.0.0.0/16", nil, 24, "10.0.0.0/24", ""},
		{"10.0.0.0/16", []string{"10.0.0.0/24", "10.0.1.0/24"}, 24, "10.0.2.0/24", ""},
		{"10.0.0.0/16", []string{"10.0.1.0/24"}, 24, "10.0.0.0/24", ""},
		{"10.0.0.0/16", []string{"10.0.0.0/23", "not-a-cidr"}, 24, "10.0.2.0/24", ""},
		{"10.0.0.0/16", []string{"10.0.0.0/24"}, 22, "10.0.4.0/22", ""},
		{"10.0.0.0/16", []string{"10.0.0.128/25"}, 24, "10.0.1.0/24", ""},
		{"10.0.0.0/8", []string{"10.0.0.0/9"}, 16, "10.128.0.0/16", ""},
		{"10.0.0.0/8", []string{"0.0.0.0/0"}, 24, "", "no free /24 left in 10.0.0.0/8"},
		{"10.0.0.0/24", []string{"10.0.0.0/25", "10.0.0.128/25"}, 26, "", "widen the network"},
		{"10.0.0.0/24", nil, 16, "", "does not fit"},
		{"10.0.0.0/24", nil, 33, "", "does not fit"},
		{"fd00::/48", nil, 64, "", "not IPv4"},
		{"nope", nil, 24, "", "not a CIDR"},
	}
	for _, tc := range tests {
		got, err := NextFreeSubnet(tc.network, tc.used, tc.prefix)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("NextFreeSubnet(%s, %v, %d): want error ~%q, got %q, %v", tc.network, tc.used, tc.prefix, tc.wantErr, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("NextFreeSubnet(%s, %v, %d) = %q, %v; want %q", tc.network, tc.used, tc.prefix, got, err, tc.want)
		}
	}
}

func TestHosts(t *testing.T) {
	for cidr, want := range map[string]int{
		"10.0.1.0/24": 253, "10.0.0.0/16": 65533, "10.0.0.0/29": 5, "10.0.0.0/30": 1,
		"10.0.0.0/31": 0, "10.0.0.1/32": 0, "fd00::/64": 0, "garbage": 0,
	} {
		if got := Hosts(cidr); got != want {
			t.Errorf("Hosts(%s) = %d, want %d", cidr, got, want)
		}
	}
}

func FuzzValidate(f *testing.F) {
	f.Add("10.0.0.0/16", "10.0.1.0/24", "10.0.2.0/24", "10.42.0.0/16", "10.43.0.0/16", "10.0.1.100", true)
	f.Add("", "", "", "", "", "", false)
	f.Add("::/0", "0.0.0.0/0", "10.0.0.0/32", "100.64.0.0/10", "172.17.0.0/16", "::1", true)
	f.Add("10.0.0.0/8", "10.0.0.0/31", "10.0.0.0/8", "fd00::/8", "10.0.0.0/0", "10.0.0.1%eth0", false)
	f.Add("192.168.0.0/33", "x/24", "10.0.0.0/-1", "1.2.3.4/5", "255.255.255.255/32", "10.0.0.255", true)
	f.Fuzz(func(t *testing.T, network, cp, worker, pods, services, vip string, native bool) {
		l := Layout{Network: network, Pods: pods, Services: services, VIP: vip, NativeRouting: native,
			Subnets: []Subnet{{CIDR: cp, Count: 3}, {CIDR: worker, Count: 300}}}
		for _, f := range Validate(l) {
			if f.Field == "" || f.Message == "" || f.Fix == "" ||
				(f.Severity != SeverityError && f.Severity != SeverityWarning) {
				t.Fatalf("incomplete finding %+v", f)
			}
		}
		_, _ = NextFreeSubnet(network, []string{cp, worker, pods}, 24)
		_ = Hosts(cp)
	})
}
