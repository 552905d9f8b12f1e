package pricing

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// Money is an amount in micro-units of the catalog currency (1e-6 EUR).
// Hetzner's API returns prices as decimal strings with up to ten decimals
// ("0.0104000000"); six decimals hold every published price exactly, so sums
// are exact integers. Amounts are rounded half-up to cents only for display
// and per estimate row.
type Money int64

// microPerUnit is the number of Money units in one currency unit.
const microPerUnit = 1_000_000

// microPerCent is the number of Money units in one cent.
const microPerCent = 10_000

// maxIntDigits bounds the integer part so a parsed amount fits an int64.
const maxIntDigits = 12

// ParseMoney parses a decimal string such as "5.9900000000" or "-0.50".
// Digits beyond the sixth decimal are rounded half-up (Hetzner's strings carry
// zeros there); anything else than an optional sign, digits and one dot is an
// error.
func ParseMoney(s string) (Money, error) {
	str := strings.TrimSpace(s)
	neg := false
	if str != "" && (str[0] == '-' || str[0] == '+') {
		neg = str[0] == '-'
		str = str[1:]
	}
	intPart, frac, _ := strings.Cut(str, ".")
	if (intPart == "" && frac == "") || !digits(intPart) || !digits(frac) || strings.Contains(frac, ".") {
		return 0, fmt.Errorf("price %q is not a decimal number (expected digits with an optional dot, like 5.99)", s)
	}
	intPart = strings.TrimLeft(intPart, "0")
	if len(intPart) > maxIntDigits {
		return 0, fmt.Errorf("price %q is too large to hold", s)
	}
	var whole int64
	if intPart != "" {
		v, err := strconv.ParseInt(intPart, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("price %q: %w", s, err)
		}
		whole = v
	}
	var micro int64
	for i := 0; i < 6; i++ {
		micro *= 10
		if i < len(frac) {
			micro += int64(frac[i] - '0')
		}
	}
	if len(frac) > 6 && frac[6] >= '5' {
		micro++
	}
	m := Money(whole*microPerUnit + micro)
	if neg {
		m = -m
	}
	return m, nil
}

// digits reports whether s holds only ASCII digits (the empty string does).
func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// String formats m rounded half-up to cents, e.g. "12.34" or "-0.50".
func (m Money) String() string {
	return m.Format(2)
}

// Format formats m rounded half-up (away from zero) to the given number of
// decimals, between 0 and 6; "0.0096" is Format(4) of a small hourly price.
func (m Money) Format(decimals int) string {
	decimals = max(0, min(6, decimals))
	unit := int64(1)
	for i := decimals; i < 6; i++ {
		unit *= 10
	}
	v := roundTo(int64(m), unit)
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	whole, frac := v/microPerUnit, (v%microPerUnit)/unit
	if decimals == 0 {
		return fmt.Sprintf("%s%d", sign, whole)
	}
	return fmt.Sprintf("%s%d.%0*d", sign, whole, decimals, frac)
}

// Cents returns m in cents, rounded half-up (away from zero).
func (m Money) Cents() int64 {
	return roundTo(int64(m), microPerCent) / microPerCent
}

// RoundCents returns m rounded half-up to whole cents.
func (m Money) RoundCents() Money {
	return Money(roundTo(int64(m), microPerCent))
}

// roundTo rounds v half-up (away from zero) to a multiple of unit.
func roundTo(v, unit int64) int64 {
	if v < 0 {
		return -roundTo(-v, unit)
	}
	return (v + unit/2) / unit * unit
}

// rate is a percentage in units of 1e-4 percent: "19.00" is 190000.
type rate int64

// parseRate parses a percentage such as Hetzner's vat_rate "19.00" or the
// backup percentage "20.00".
func parseRate(s string) (rate, error) {
	m, err := ParseMoney(s)
	if err != nil {
		return 0, err
	}
	if m < 0 || m > 1000*microPerUnit {
		return 0, fmt.Errorf("percentage %q is out of range (0 to 1000)", s)
	}
	return rate(roundTo(int64(m), 100) / 100), nil
}

// rateDivisor turns m*r into r percent of m: 100 % times 1e4 units per percent.
const rateDivisor = 1_000_000

// of returns r percent of m, rounded half-up (away from zero) to a micro-unit.
// The product is computed in 128 bits, so no realistic amount overflows.
func (r rate) of(m Money) Money {
	neg := m < 0
	a := uint64(m)
	if neg {
		a = uint64(-m)
	}
	hi, lo := bits.Mul64(a, uint64(r))
	lo, carry := bits.Add64(lo, rateDivisor/2, 0)
	hi += carry
	if hi >= rateDivisor {
		// The result would not fit 64 bits; saturate rather than panic.
		if neg {
			return Money(math.MinInt64)
		}
		return Money(math.MaxInt64)
	}
	q, _ := bits.Div64(hi, lo, rateDivisor)
	if q > math.MaxInt64 {
		q = math.MaxInt64
	}
	if neg {
		return -Money(q)
	}
	return Money(q)
}
