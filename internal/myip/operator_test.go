package myip

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

// TestParseOperator: a named IPv4 address is admitted as its /32 and an
// IPv6 one as its /64, as detected ones are; a range stands as written
// (masked); a wrong entry is named.
func TestParseOperator(t *testing.T) {
	o, err := ParseOperator(" 203.0.113.7, 2001:db8:1:2::7 ,198.51.100.9/24,::ffff:192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	wantRanges := []netip.Prefix{netip.MustParsePrefix("203.0.113.7/32"), netip.MustParsePrefix("2001:db8:1:2::7/128"),
		netip.MustParsePrefix("198.51.100.0/24"), netip.MustParsePrefix("192.0.2.1/32")}
	if !reflect.DeepEqual(o.Ranges, wantRanges) {
		t.Errorf("ranges = %v, want %v", o.Ranges, wantRanges)
	}
	if want := []string{"203.0.113.7/32", "2001:db8:1:2::/64", "198.51.100.0/24", "192.0.2.1/32"}; !reflect.DeepEqual(o.Sources, want) {
		t.Errorf("sources = %v, want %v", o.Sources, want)
	}
	if got, want := o.String(), "203.0.113.7, 2001:db8:1:2::7, 198.51.100.0/24, 192.0.2.1"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	for in, want := range map[string]string{
		"laptop":              `"laptop" is not an IP address or CIDR`,
		"203.0.113.7, ::/129": `"::/129" is not an IP address or CIDR`,
		"fe80::1%eth0":        "zone",
		"::":                  "not a host address",
		"224.0.0.1":           "not a host address",
		",":                   "names no address",
	} {
		if _, err := ParseOperator(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseOperator(%q) = %v, want an error with %q", in, err, want)
		}
	}
}

func TestDetectedOperator(t *testing.T) {
	o := Addresses{IPv4: netip.MustParseAddr("127.0.0.1"), IPv6: netip.MustParseAddr("2001:db8::7")}.Operator()
	if want := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("2001:db8::7/128")}; !reflect.DeepEqual(o.Ranges, want) {
		t.Errorf("ranges = %v, want %v", o.Ranges, want)
	}
	if want := []string{"127.0.0.1/32", "2001:db8::/64"}; !reflect.DeepEqual(o.Sources, want) {
		t.Errorf("sources = %v, want %v", o.Sources, want)
	}
}
