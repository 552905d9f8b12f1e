package components

import (
	"fmt"
	"strings"

	"github.com/ohmytalos/ohmytalos/internal/pricing"
	"github.com/ohmytalos/ohmytalos/ui/common"
)

// Cost is what the cost panel shows: the catalog (or why it did not load),
// the estimate of the working spec (or why it failed), and the cost of the
// spec the last finished apply used (nil for a new cluster).
type Cost struct {
	Sandbox     bool
	Catalog     *pricing.Catalog
	CatalogErr  error
	Estimate    *pricing.Estimate
	EstimateErr error
	Applied     *pricing.Estimate
}

// CostPanel renders the estimate: per group (pool, load balancer, images)
// the monthly net and gross, with the item rows when detail is set, then
// the totals and where the prices come from.
func CostPanel(st common.Styles, c Cost, width int, detail bool) string {
	var b strings.Builder
	title := "monthly cost"
	if c.Sandbox {
		title = "monthly cost on Hetzner (sandbox: nothing is billed)"
	}
	b.WriteString(st.Bold.Render(common.Truncate(title, width)) + "\n")
	switch {
	case c.Catalog == nil && c.CatalogErr != nil:
		b.WriteString(st.Warn.Render(common.Wrap("prices unavailable: "+c.CatalogErr.Error(), width)))
		return b.String()
	case c.Catalog == nil:
		b.WriteString(st.Subtle.Render("loading prices…"))
		return b.String()
	case c.EstimateErr != nil:
		b.WriteString(st.Bad.Render(common.Wrap(c.EstimateErr.Error(), width)))
		return b.String()
	case c.Estimate == nil:
		return b.String()
	}
	e := c.Estimate
	numW := 9
	nameW := max(width-2*numW-2, 8)
	line := func(name, net, gross string) string {
		return fmt.Sprintf("%-*s %*s %*s", nameW, common.Truncate(name, nameW), numW, net, numW, gross)
	}
	b.WriteString(st.Subtle.Render(line("", "net", "gross")) + "\n")
	for _, g := range e.Groups {
		b.WriteString(line(g.Group, g.MonthlyNet.Format(2), g.MonthlyGross.Format(2)) + "\n")
		if !detail {
			continue
		}
		for _, r := range e.Rows {
			if r.Group == g.Group {
				b.WriteString(st.Subtle.Render(line("  "+r.Quantity+" × "+r.Item, r.MonthlyNet.Format(2), r.MonthlyGross.Format(2))) + "\n")
			}
		}
	}
	b.WriteString(st.Bold.Render(line("total "+e.Currency+"/month", e.MonthlyNet.Format(2), e.MonthlyGross.Format(2))) + "\n")
	if a := c.Applied; a != nil && a.MonthlyNet != e.MonthlyNet {
		// The running cluster's cost, and what the change adds or saves.
		b.WriteString(st.Subtle.Render(line("running now", a.MonthlyNet.Format(2), a.MonthlyGross.Format(2))) + "\n")
		b.WriteString(st.Warn.Render(line("change", signed(e.MonthlyNet-a.MonthlyNet), signed(e.MonthlyGross-a.MonthlyGross))) + "\n")
	}
	b.WriteString(st.Subtle.Render(fmt.Sprintf("%s %s/hour net; VAT %s %%", e.HourlyNet.Format(4), e.Currency, e.VATRate)) + "\n")
	b.WriteString(st.Subtle.Render(common.Wrap(e.Label, width)))
	return b.String()
}

// signed formats a cost change with its sign ("+14.49", "-14.49").
func signed(m pricing.Money) string {
	if m < 0 {
		return "-" + (-m).Format(2)
	}
	return "+" + m.Format(2)
}

// EstimateGroup returns a group's totals, if the estimate has it.
func EstimateGroup(e *pricing.Estimate, group string) (pricing.GroupTotal, bool) {
	if e == nil {
		return pricing.GroupTotal{}, false
	}
	for _, g := range e.Groups {
		if g.Group == group {
			return g, true
		}
	}
	return pricing.GroupTotal{}, false
}
