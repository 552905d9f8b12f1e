package pricing

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// PoolUsage is one node pool as the cost model sees it.
type PoolUsage struct {
	Name, ServerType, Location string
	Count                      int
	// VolumeGB is the size of the volume attached to each server (0: none).
	VolumeGB int
	// PublicIPv4 and PublicIPv6 say whether each server gets a primary IP.
	PublicIPv4, PublicIPv6 bool
}

// LBUsage is one load balancer.
type LBUsage struct {
	Name, Type, Location string
}

// SnapshotUsage is one stored image (e.g. a Talos snapshot per arch).
type SnapshotUsage struct {
	Name   string
	SizeGB float64
}

// Usage is what a cluster spec asks Hetzner for.
type Usage struct {
	Pools         []PoolUsage
	LoadBalancers []LBUsage
	Snapshots     []SnapshotUsage
	// Backups enables Hetzner's server backups on every server.
	Backups bool
	// VATRate overrides the catalog's VAT rate in percent ("" keeps it).
	VATRate string
	// Now dates the estimate, for the age of offline prices (zero: now).
	Now time.Time
}

// Row is one line of an estimate. Monthly amounts are rounded to cents, so
// the totals are the exact sums of the rows.
type Row struct {
	Group, Item string
	Quantity    string
	// UnitMonthly is the net monthly price of one unit, unrounded.
	UnitMonthly              Money
	MonthlyNet, MonthlyGross Money
	HourlyNet                Money
	Note                     string
}

// GroupTotal sums the rows of one group (a pool, a load balancer, images).
type GroupTotal struct {
	Group                    string
	MonthlyNet, MonthlyGross Money
	HourlyNet                Money
}

// Estimate is the cost of a Usage: rows, totals per group and overall,
// notes on how Hetzner bills, and where the prices come from.
type Estimate struct {
	Rows                                []Row
	Groups                              []GroupTotal
	MonthlyNet, MonthlyGross, HourlyNet Money
	Currency                            string
	VATRate                             string
	Notes                               []string
	Label                               string
	// Live is set when the prices came from the Hetzner API; AsOf dates
	// the offline price list otherwise.
	Live bool
	AsOf string
	// Warning is set when the offline prices are older than
	// StaleAfterDays (see Catalog.StaleWarning).
	Warning string
}

// groupImages is the group of snapshot rows.
const groupImages = "images"

// Estimate prices u with the catalog. It fails on the first pool, load
// balancer or snapshot it cannot price, naming the field and the fix.
func (c *Catalog) Estimate(u Usage) (Estimate, error) {
	vatText := c.VATRate
	if u.VATRate != "" {
		vatText = u.VATRate
	}
	vat, err := parseRate(vatText)
	if err != nil {
		return Estimate{}, fmt.Errorf("VAT rate: %w; write it in percent, like 19.00", err)
	}
	b := builder{vat: vat}
	for i, p := range u.Pools {
		if err := c.addPool(&b, p, u.Backups); err != nil {
			return Estimate{}, fmt.Errorf("pools[%d] (%s): %w", i, p.Name, err)
		}
	}
	for i, lb := range u.LoadBalancers {
		if err := c.addLoadBalancer(&b, lb); err != nil {
			return Estimate{}, fmt.Errorf("loadBalancers[%d] (%s): %w", i, lb.Name, err)
		}
	}
	for i, s := range u.Snapshots {
		if s.SizeGB < 0 || math.IsNaN(s.SizeGB) || math.IsInf(s.SizeGB, 0) || s.SizeGB > 1e9 {
			return Estimate{}, fmt.Errorf("snapshots[%d] (%s): size %v GB is not a valid size; use the image size in GB", i, s.Name, s.SizeGB)
		}
		milliGB := int64(math.Round(s.SizeGB * 1000))
		net := Money(roundTo(int64(c.ImageGBMonth)*milliGB, 1000) / 1000)
		b.add(Row{Group: groupImages, Item: "snapshot " + s.Name,
			Quantity: strconv.FormatFloat(s.SizeGB, 'f', -1, 64) + " GB", UnitMonthly: c.ImageGBMonth,
			MonthlyNet: net, Note: "billed per GB-month"})
	}
	e := b.finish()
	e.Currency, e.VATRate, e.Label = c.Currency, vatText, c.Label()
	e.Live, e.AsOf = c.Live, c.AsOf
	now := u.Now
	if now.IsZero() {
		now = time.Now()
	}
	e.Warning = c.StaleWarning(now)
	e.Notes = append([]string{"Hetzner bills by the hour up to the monthly cap: a month of use costs the monthly price, less costs the hours used"},
		b.notes...)
	e.Notes = append(e.Notes, "gross = net + "+vatText+" % VAT, rounded per row", c.Label())
	if !c.Live {
		e.Notes = append(e.Notes, "Hetzner may have changed prices since "+c.AsOf+"; with an API token the estimate uses live prices")
	}
	return e, nil
}

// addPool adds the rows of one pool: servers, backups, volumes, primary IPs.
func (c *Catalog) addPool(b *builder, p PoolUsage, backups bool) error {
	if p.Count < 0 {
		return fmt.Errorf("count %d is negative; use 0 or more servers", p.Count)
	}
	if err := c.CheckServerType(p.ServerType, p.Location, ""); err != nil {
		return fmt.Errorf("serverType: %w", err)
	}
	st := c.ServerTypes[p.ServerType]
	price := st.Prices[p.Location]
	n := Money(p.Count)
	qty := strconv.Itoa(p.Count)
	b.add(Row{Group: p.Name, Item: fmt.Sprintf("%s server (%s)", st.Name, p.Location), Quantity: qty,
		UnitMonthly: price.Monthly, MonthlyNet: n * price.Monthly, HourlyNet: n * price.Hourly,
		Note: fmt.Sprintf("%d vCPU, %g GB RAM, %d GB disk, %s", st.Cores, st.MemoryGB, st.DiskGB, talosArch(st.Architecture))})
	if tb, ok := st.TrafficTB[p.Location]; ok && tb > 0 {
		b.note(fmt.Sprintf("%s TB traffic included per %s server in %s", strconv.FormatFloat(tb, 'f', -1, 64), st.Name, p.Location))
	}
	if backups {
		pct, err := parseRate(c.BackupPercent)
		if err != nil || c.BackupPercent == "" {
			return errors.New("backups are enabled but the price list has no backup percentage; refresh the prices from the Hetzner API or turn backups off")
		}
		b.add(Row{Group: p.Name, Item: "backups (" + c.BackupPercent + " % of the server price)", Quantity: qty,
			UnitMonthly: pct.of(price.Monthly), MonthlyNet: pct.of(n * price.Monthly), HourlyNet: pct.of(n * price.Hourly)})
	}
	if p.VolumeGB < 0 {
		return fmt.Errorf("volume size %d GB is negative; use 0 for no volume", p.VolumeGB)
	}
	if p.VolumeGB > 0 {
		unit := Money(p.VolumeGB) * c.VolumeGBMonth
		b.add(Row{Group: p.Name, Item: fmt.Sprintf("volume %d GB", p.VolumeGB), Quantity: qty,
			UnitMonthly: unit, MonthlyNet: n * unit, Note: "billed per GB-month"})
	}
	for _, ip := range []struct {
		on     bool
		name   string
		prices map[string]Price
	}{{p.PublicIPv4, "primary IPv4", c.PrimaryIPv4}, {p.PublicIPv6, "primary IPv6", c.PrimaryIPv6}} {
		if !ip.on {
			continue
		}
		pr, ok := ip.prices[p.Location]
		if !ok {
			return fmt.Errorf("the price list has no %s price in %s; refresh the prices from the Hetzner API", ip.name, p.Location)
		}
		b.add(Row{Group: p.Name, Item: ip.name, Quantity: qty, UnitMonthly: pr.Monthly,
			MonthlyNet: n * pr.Monthly, HourlyNet: n * pr.Hourly})
	}
	return nil
}

// addLoadBalancer adds the row of one load balancer.
func (c *Catalog) addLoadBalancer(b *builder, lb LBUsage) error {
	t, ok := c.LoadBalancerTypes[lb.Type]
	if !ok {
		names := make([]string, 0, len(c.LoadBalancerTypes))
		for n := range c.LoadBalancerTypes {
			names = append(names, n)
		}
		sortStrings(names)
		return fmt.Errorf("type: unknown load balancer type %q; use one of %v", lb.Type, names)
	}
	pr, ok := t.Prices[lb.Location]
	if !ok {
		return fmt.Errorf("location: load balancer type %s has no price in %q; use a location where it is offered: %v", lb.Type, lb.Location, sortedKeys(t.Prices))
	}
	b.add(Row{Group: lb.Name, Item: fmt.Sprintf("%s load balancer (%s)", lb.Type, lb.Location), Quantity: "1",
		UnitMonthly: pr.Monthly, MonthlyNet: pr.Monthly, HourlyNet: pr.Hourly})
	if tb := t.TrafficTB[lb.Location]; tb > 0 {
		b.note(fmt.Sprintf("%s TB traffic included per %s load balancer", strconv.FormatFloat(tb, 'f', -1, 64), lb.Type))
	}
	return nil
}
