package pricing

import (
	"fmt"
	"time"
)

// StaleAfterDays is the age of offline prices past which the cost output
// warns: Hetzner changed its cloud prices on 2026-04-01 and again, for new
// orders, on 2026-06-15.
const StaleAfterDays = 90

// Age is how many whole days before now the offline prices are dated; ok is
// false for live prices or an unreadable date.
func (c *Catalog) Age(now time.Time) (days int, ok bool) {
	if c.Live {
		return 0, false
	}
	asOf, err := time.Parse(time.DateOnly, c.AsOf)
	if err != nil {
		return 0, false
	}
	return int(now.UTC().Sub(asOf).Hours() / 24), true
}

// StaleWarning says, when the offline prices are older than
// StaleAfterDays, how old they are and what to do; "" otherwise.
func (c *Catalog) StaleWarning(now time.Time) string {
	days, ok := c.Age(now)
	if !ok || days <= StaleAfterDays {
		return ""
	}
	return fmt.Sprintf("the offline prices are from %s, %d days ago (more than %d): Hetzner may charge more now; set the API token (secrets.hcloudToken) for live prices",
		c.AsOf, days, StaleAfterDays)
}
