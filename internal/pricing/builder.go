package pricing

import "sort"

// builder collects estimate rows, rounding each to cents, and the notes.
type builder struct {
	vat    rate
	rows   []Row
	notes  []string
	noted  map[string]bool
	groups []GroupTotal
	index  map[string]int
}

// add rounds a row's monthly net amount to cents, derives its gross amount
// (net plus VAT, rounded to cents) and records it under its group.
func (b *builder) add(r Row) {
	r.MonthlyNet = r.MonthlyNet.RoundCents()
	r.MonthlyGross = (r.MonthlyNet + b.vat.of(r.MonthlyNet)).RoundCents()
	b.rows = append(b.rows, r)
	if b.index == nil {
		b.index = map[string]int{}
	}
	i, ok := b.index[r.Group]
	if !ok {
		i = len(b.groups)
		b.index[r.Group] = i
		b.groups = append(b.groups, GroupTotal{Group: r.Group})
	}
	g := &b.groups[i]
	g.MonthlyNet += r.MonthlyNet
	g.MonthlyGross += r.MonthlyGross
	g.HourlyNet += r.HourlyNet
}

// note records a note once.
func (b *builder) note(s string) {
	if b.noted == nil {
		b.noted = map[string]bool{}
	}
	if !b.noted[s] {
		b.noted[s] = true
		b.notes = append(b.notes, s)
	}
}

// finish sums the rows into an estimate.
func (b *builder) finish() Estimate {
	e := Estimate{Rows: b.rows, Groups: b.groups}
	for _, r := range b.rows {
		e.MonthlyNet += r.MonthlyNet
		e.MonthlyGross += r.MonthlyGross
		e.HourlyNet += r.HourlyNet
	}
	return e
}

// sortStrings sorts s in place and returns it.
func sortStrings(s []string) []string {
	sort.Strings(s)
	return s
}

// sortedKeys returns the sorted keys of a price map.
func sortedKeys(m map[string]Price) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return sortStrings(out)
}
