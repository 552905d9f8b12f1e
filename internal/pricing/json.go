package pricing

// The JSON form of an estimate, documented in docs/json.md. Amounts are
// decimal strings in the currency's units, as Hetzner's API writes prices
// ("5.9900000000"), with JSONDecimals decimals.

// JSONDecimals is the number of decimals of every amount in JSON output:
// enough for Hetzner's hourly prices ("0.0104"); monthly amounts are whole
// cents, so their last two decimals are zeros ("48.0400").
const JSONDecimals = 4

// EstimateJSON is an estimate as scripts read it.
type EstimateJSON struct {
	Currency     string          `json:"currency"`
	VATRate      string          `json:"vat_rate"`
	PriceSource  PriceSourceJSON `json:"price_source"`
	MonthlyNet   string          `json:"monthly_net"`
	MonthlyGross string          `json:"monthly_gross"`
	HourlyNet    string          `json:"hourly_net"`
	Groups       []GroupJSON     `json:"groups"`
	Rows         []RowJSON       `json:"rows"`
	Notes        []string        `json:"notes"`
}

// PriceSourceJSON says where the prices come from.
type PriceSourceJSON struct {
	Live  bool   `json:"live"`
	AsOf  string `json:"as_of,omitempty"`
	Label string `json:"label"`
	// Warning is set when the offline prices are more than 90 days old.
	Warning string `json:"warning,omitempty"`
}

// GroupJSON is the total of one group: a pool, a load balancer, images.
type GroupJSON struct {
	Group        string `json:"group"`
	MonthlyNet   string `json:"monthly_net"`
	MonthlyGross string `json:"monthly_gross"`
	HourlyNet    string `json:"hourly_net"`
}

// RowJSON is one priced item.
type RowJSON struct {
	Group          string `json:"group"`
	Item           string `json:"item"`
	Quantity       string `json:"quantity"`
	UnitMonthlyNet string `json:"unit_monthly_net"`
	MonthlyNet     string `json:"monthly_net"`
	MonthlyGross   string `json:"monthly_gross"`
	HourlyNet      string `json:"hourly_net"`
	Note           string `json:"note,omitempty"`
}

// JSONAmount is m as a JSON amount: a decimal string with JSONDecimals
// decimals, rounded half-up.
func JSONAmount(m Money) string { return m.Format(JSONDecimals) }

// JSON is e in its documented JSON form. Lists are never null.
func (e Estimate) JSON() EstimateJSON {
	cur := e.Currency
	if cur == "" {
		cur = "EUR"
	}
	out := EstimateJSON{
		Currency: cur, VATRate: vatRateJSON(e.VATRate),
		PriceSource:  PriceSourceJSON{Live: e.Live, Label: e.Label, Warning: e.Warning},
		MonthlyNet:   JSONAmount(e.MonthlyNet),
		MonthlyGross: JSONAmount(e.MonthlyGross),
		HourlyNet:    JSONAmount(e.HourlyNet),
		Groups:       make([]GroupJSON, 0, len(e.Groups)),
		Rows:         make([]RowJSON, 0, len(e.Rows)),
		Notes:        append([]string{}, e.Notes...),
	}
	if !e.Live {
		out.PriceSource.AsOf = e.AsOf
	}
	for _, g := range e.Groups {
		out.Groups = append(out.Groups, GroupJSON{Group: g.Group, MonthlyNet: JSONAmount(g.MonthlyNet),
			MonthlyGross: JSONAmount(g.MonthlyGross), HourlyNet: JSONAmount(g.HourlyNet)})
	}
	for _, r := range e.Rows {
		out.Rows = append(out.Rows, RowJSON{Group: r.Group, Item: r.Item, Quantity: r.Quantity,
			UnitMonthlyNet: JSONAmount(r.UnitMonthly), MonthlyNet: JSONAmount(r.MonthlyNet),
			MonthlyGross: JSONAmount(r.MonthlyGross), HourlyNet: JSONAmount(r.HourlyNet), Note: r.Note})
	}
	return out
}

// vatRateJSON writes a VAT percentage with two decimals, as Hetzner's
// vat_rate ("19.00"); a rate that does not parse is kept as given.
func vatRateJSON(s string) string {
	r, err := parseRate(s)
	if err != nil {
		return s
	}
	return Money(int64(r) * 100).Format(2)
}
