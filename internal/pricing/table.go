package pricing

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteTable writes e as an aligned text table: one line per row, a line per
// group total when there are several groups, the grand total, then the notes
// (hourly billing up to the monthly cap, included traffic, the price label).
func WriteTable(w io.Writer, e Estimate) error {
	cur := e.Currency
	if cur == "" {
		cur = "EUR"
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "GROUP\tITEM\tQTY\tUNIT/MONTH\tNET/MONTH\tGROSS/MONTH\tNET/HOUR\tNOTE\n")
	for _, r := range e.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Group, r.Item, r.Quantity,
			r.UnitMonthly.Format(4), r.MonthlyNet, r.MonthlyGross, r.HourlyNet.Format(4), r.Note)
	}
	if len(e.Groups) > 1 {
		fmt.Fprintf(tw, "\t\t\t\t\t\t\t\n")
		for _, g := range e.Groups {
			fmt.Fprintf(tw, "%s\tsubtotal\t\t\t%s\t%s\t%s\t\n", g.Group, g.MonthlyNet, g.MonthlyGross, g.HourlyNet.Format(4))
		}
	}
	fmt.Fprintf(tw, "TOTAL (%s)\t\t\t\t%s\t%s\t%s\t\n", cur, e.MonthlyNet, e.MonthlyGross, e.HourlyNet.Format(4))
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("writing the cost table failed: %w", err)
	}
	if e.Warning != "" {
		if _, err := fmt.Fprintf(w, "warning: %s\n", e.Warning); err != nil {
			return fmt.Errorf("writing the cost table failed: %w", err)
		}
	}
	for _, n := range e.Notes {
		if _, err := fmt.Fprintf(w, "- %s\n", n); err != nil {
			return fmt.Errorf("writing the cost table failed: %w", err)
		}
	}
	return nil
}
