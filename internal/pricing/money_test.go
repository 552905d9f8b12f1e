package pricing

import (
	"math"
	"testing"
)

func TestParseMoney(t *testing.T) {
	good := map[string]Money{
		"5.9900000000": 5_990_000, "0.0104000000": 10_400, "12": 12_000_000, ".5": 500_000,
		"5.": 5_000_000, "-1.5": -1_500_000, "+0.25": 250_000, " 7.1400 ": 7_140_000,
		"0.00000049": 0, "0.0000005": 1, "0.0000015000": 2, "-0.0000005": -1,
		"999999999999.999999": 999_999_999_999_999_999,
	}
	for s, want := range good {
		got, err := ParseMoney(s)
		if err != nil || got != want {
			t.Errorf("ParseMoney(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", " ", ".", "abc", "1.2.3", "1e5", "--1", "1,5", "0x10", "1 000", "9999999999999"} {
		if got, err := ParseMoney(s); err == nil {
			t.Errorf("ParseMoney(%q) = %d, want an error", s, got)
		}
	}
}

func TestMoneyFormatAndCents(t *testing.T) {
	tests := []struct {
		m     Money
		str   string
		cents int64
		four  string
	}{
		{5_990_000, "5.99", 599, "5.9900"},
		{5_995_000, "6.00", 600, "5.9950"},
		{5_994_999, "5.99", 599, "5.9950"},
		{9_600, "0.01", 1, "0.0096"},
		{4_999, "0.00", 0, "0.0050"},
		{-5_000, "-0.01", -1, "-0.0050"},
		{0, "0.00", 0, "0.0000"},
		{123_456_789_000, "123456.79", 12_345_679, "123456.7890"},
	}
	for _, tc := range tests {
		if got := tc.m.String(); got != tc.str {
			t.Errorf("%d.String() = %q, want %q", tc.m, got, tc.str)
		}
		if got := tc.m.Cents(); got != tc.cents {
			t.Errorf("%d.Cents() = %d, want %d", tc.m, got, tc.cents)
		}
		if got := tc.m.Format(4); got != tc.four {
			t.Errorf("%d.Format(4) = %q, want %q", tc.m, got, tc.four)
		}
	}
	if got := Money(1_500_000).Format(0); got != "2" {
		t.Errorf("Format(0) = %q, want 2", got)
	}
}

func TestRate(t *testing.T) {
	r, err := parseRate("19.00")
	if err != nil || r != 190_000 {
		t.Fatalf("parseRate(19.00) = %d, %v", r, err)
	}
	if got := r.of(17_970_000); got != 3_414_300 { // 19 % of 17.97 = 3.4143
		t.Errorf("19%% of 17.97 = %d, want 3414300", got)
	}
	if got := r.of(-17_970_000); got != -3_414_300 {
		t.Errorf("19%% of -17.97 = %d, want -3414300", got)
	}
	if got := r.of(Money(math.MaxInt64)); got <= 0 {
		t.Errorf("19%% of MaxInt64 must not wrap, got %d", got)
	}
	for _, bad := range []string{"x", "-1", "1001"} {
		if _, err := parseRate(bad); err == nil {
			t.Errorf("parseRate(%q): want an error", bad)
		}
	}
}
