// Package pricing knows what a cluster costs on Hetzner Cloud: a catalog of
// prices and server types, live from the API (GET /pricing and
// GET /server_types) or from the dated snapshot embedded in the binary, and a
// cost model that turns node pools, load balancers and snapshots into an
// estimate with rows exact to the cent.
package pricing

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud/schema"
)

// Price is a net price (excluding VAT) billed by the hour up to a monthly cap.
type Price struct {
	Hourly, Monthly Money
}

// ServerType describes one Hetzner server type and its prices per location.
type ServerType struct {
	Name string
	// Architecture is "x86" or "arm", as the API spells it.
	Architecture string
	Cores        int
	MemoryGB     float64
	DiskGB       int
	// CPUType is "shared" or "dedicated".
	CPUType string
	// Deprecated is set when Hetzner announced the type's end of sale.
	Deprecated bool
	// Deprecation dates the type-wide end of sale, when the API gives it.
	Deprecation *Deprecation
	// LocationDeprecations dates the end of sale per location (the API's
	// server_type.locations[].deprecation).
	LocationDeprecations map[string]Deprecation
	// Prices holds net prices by location name.
	Prices map[string]Price
	// GrossPrices holds the API's gross prices by location name.
	GrossPrices map[string]Price
	// Available says by location whether the type can be ordered there now.
	Available map[string]bool
	// IncludedTrafficTB is the smallest monthly traffic allowance, in TB
	// (TiB as Hetzner counts), over the locations that price the type.
	IncludedTrafficTB float64
	// TrafficTB holds the traffic allowance by location.
	TrafficTB map[string]float64
}

// Deprecation is when Hetzner announced a server type's end of sale and
// after which date it can no longer be ordered.
type Deprecation struct {
	Announced, UnavailableAfter time.Time
}

// String reads "announced 2025-10-16, unavailable after 2026-01-16".
func (d Deprecation) String() string {
	s := "announced " + d.Announced.UTC().Format(time.DateOnly)
	if !d.UnavailableAfter.IsZero() {
		s += ", unavailable after " + d.UnavailableAfter.UTC().Format(time.DateOnly)
	}
	return s
}

// LoadBalancerType describes one Hetzner load balancer type.
type LoadBalancerType struct {
	Name string
	// Prices holds net prices by location name.
	Prices map[string]Price
	// GrossPrices holds the API's gross prices by location name.
	GrossPrices map[string]Price
	// TrafficTB holds the traffic allowance by location.
	TrafficTB map[string]float64
}

// Catalog holds everything the cost model needs, from one source.
type Catalog struct {
	// Currency is the API's currency, "EUR".
	Currency string
	// VATRate is the API's VAT rate in percent, e.g. "19.00".
	VATRate string
	// Live is set for prices fetched from the API.
	Live bool
	// AsOf is the date (YYYY-MM-DD) of the prices.
	AsOf string
	// Sources says where the prices come from.
	Sources []string
	// Notes carries caveats of the source (e.g. an old snapshot).
	Notes string
	// ServerTypes holds the server types by name.
	ServerTypes map[string]ServerType
	// LoadBalancerTypes holds the load balancer types by name.
	LoadBalancerTypes map[string]LoadBalancerType
	// PrimaryIPv4 and PrimaryIPv6 hold primary IP prices by location.
	PrimaryIPv4, PrimaryIPv6 map[string]Price
	// VolumeGBMonth is the net price of one GB of volume for a month.
	VolumeGBMonth Money
	// ImageGBMonth is the net price of one GB of snapshot for a month.
	ImageGBMonth Money
	// BackupPercent is the backup surcharge in percent of the server price.
	BackupPercent string
}

// Label says where the prices come from, for the cost panel and the table.
func (c *Catalog) Label() string {
	if c.Live {
		return "live prices from the Hetzner API"
	}
	return "offline prices as of " + c.AsOf + " (Hetzner price list)"
}

// Locations returns the sorted names of every location with a server price.
func (c *Catalog) Locations() []string {
	seen := map[string]bool{}
	for _, st := range c.ServerTypes {
		for loc := range st.Prices {
			seen[loc] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// bytesPerTB converts the API's included_traffic (bytes) to Hetzner's TB,
// which are TiB: 20 TB is 21990232555520 bytes.
const bytesPerTB = 1 << 40

// newCatalog builds a catalog from the bodies of GET /pricing and
// GET /server_types.
func newCatalog(p schema.Pricing, types []schema.ServerType) (*Catalog, error) {
	if _, err := parseRate(p.VATRate); err != nil {
		return nil, fmt.Errorf("pricing: vat_rate: %w", err)
	}
	volume, err := ParseMoney(p.Volume.PricePerGBPerMonth.Net)
	if err != nil {
		return nil, fmt.Errorf("pricing: volume price per GB: %w", err)
	}
	image, err := ParseMoney(p.Image.PricePerGBMonth.Net)
	if err != nil {
		return nil, fmt.Errorf("pricing: image price per GB: %w", err)
	}
	if p.ServerBackup.Percentage != "" {
		if _, err := parseRate(p.ServerBackup.Percentage); err != nil {
			return nil, fmt.Errorf("pricing: server backup percentage: %w", err)
		}
	}
	c := &Catalog{
		Currency:          p.Currency,
		VATRate:           p.VATRate,
		ServerTypes:       map[string]ServerType{},
		LoadBalancerTypes: map[string]LoadBalancerType{},
		PrimaryIPv4:       map[string]Price{},
		PrimaryIPv6:       map[string]Price{},
		VolumeGBMonth:     volume,
		ImageGBMonth:      image,
		BackupPercent:     p.ServerBackup.Percentage,
	}
	priced := map[string][]schema.PricingServerTypePrice{}
	for _, st := range p.ServerTypes {
		priced[st.Name] = st.Prices
	}
	for _, st := range types {
		prices := priced[st.Name]
		if len(prices) == 0 {
			prices = st.Prices
		}
		t, err := serverType(st, prices)
		if err != nil {
			return nil, err
		}
		c.ServerTypes[t.Name] = t
		delete(priced, st.Name)
	}
	for name, prices := range priced {
		// Priced but not described: keep the prices; the type cannot be
		// checked for architecture and is never proposed as an alternative.
		t, err := serverType(schema.ServerType{Name: name}, prices)
		if err != nil {
			return nil, err
		}
		c.ServerTypes[name] = t
	}
	for _, lb := range p.LoadBalancerTypes {
		t := LoadBalancerType{Name: lb.Name, Prices: map[string]Price{}, GrossPrices: map[string]Price{}, TrafficTB: map[string]float64{}}
		for _, pr := range lb.Prices {
			net, gross, err := pricePair(pr.PriceHourly, pr.PriceMonthly)
			if err != nil {
				return nil, fmt.Errorf("pricing: load balancer type %s in %s: %w", lb.Name, pr.Location, err)
			}
			t.Prices[pr.Location], t.GrossPrices[pr.Location] = net, gross
			t.TrafficTB[pr.Location] = float64(pr.IncludedTraffic) / bytesPerTB
		}
		c.LoadBalancerTypes[lb.Name] = t
	}
	for _, ip := range p.PrimaryIPs {
		target := map[string]map[string]Price{"ipv4": c.PrimaryIPv4, "ipv6": c.PrimaryIPv6}[ip.Type]
		if target == nil {
			continue
		}
		for _, pr := range ip.Prices {
			net, _, err := pricePair(pr.PriceHourly, pr.PriceMonthly)
			if err != nil {
				return nil, fmt.Errorf("pricing: primary %s in %s: %w", ip.Type, pr.Location, err)
			}
			target[pr.Location] = net
		}
	}
	return c, nil
}

// serverType converts one server type and its per-location prices.
func serverType(st schema.ServerType, prices []schema.PricingServerTypePrice) (ServerType, error) {
	t := ServerType{
		Name:         st.Name,
		Architecture: st.Architecture,
		Cores:        st.Cores,
		MemoryGB:     float64(st.Memory),
		DiskGB:       st.Disk,
		CPUType:      st.CPUType,
		Deprecated:   st.Deprecated || st.Deprecation != nil,
		Prices:       map[string]Price{},
		GrossPrices:  map[string]Price{},
		Available:    map[string]bool{},
		TrafficTB:    map[string]float64{},

		LocationDeprecations: map[string]Deprecation{},
	}
	if st.Deprecation != nil {
		t.Deprecation = &Deprecation{Announced: st.Deprecation.Announced, UnavailableAfter: st.Deprecation.UnavailableAfter}
	}
	for i, pr := range prices {
		net, gross, err := pricePair(pr.PriceHourly, pr.PriceMonthly)
		if err != nil {
			return ServerType{}, fmt.Errorf("pricing: server type %s in %s: %w", st.Name, pr.Location, err)
		}
		t.Prices[pr.Location], t.GrossPrices[pr.Location] = net, gross
		tb := float64(pr.IncludedTraffic) / bytesPerTB
		t.TrafficTB[pr.Location] = tb
		if i == 0 || tb < t.IncludedTrafficTB {
			t.IncludedTrafficTB = tb
		}
	}
	if len(st.Locations) > 0 {
		for _, loc := range st.Locations {
			t.Available[loc.Name] = loc.Available && loc.Deprecation == nil && !t.Deprecated
			if loc.Deprecation != nil {
				t.LocationDeprecations[loc.Name] = Deprecation{Announced: loc.Deprecation.Announced, UnavailableAfter: loc.Deprecation.UnavailableAfter}
			}
		}
	} else {
		// Older API bodies carry no per-location availability: a priced,
		// non-deprecated type is taken as orderable where it is priced.
		for loc := range t.Prices {
			t.Available[loc] = !t.Deprecated && st.Architecture != ""
		}
	}
	for loc, ok := range t.Available {
		if _, priced := t.Prices[loc]; ok && !priced {
			t.Available[loc] = false // nothing to bill: treat as not orderable
		}
	}
	return t, nil
}

// pricePair parses an hourly and a monthly price into net and gross prices.
func pricePair(hourly, monthly schema.Price) (net, gross Price, err error) {
	fields := []struct {
		s   string
		dst *Money
	}{
		{hourly.Net, &net.Hourly}, {monthly.Net, &net.Monthly},
		{hourly.Gross, &gross.Hourly}, {monthly.Gross, &gross.Monthly},
	}
	for _, f := range fields {
		if f.s == "" {
			continue // the API omits gross in some bodies; net is what counts
		}
		if *f.dst, err = ParseMoney(f.s); err != nil {
			return Price{}, Price{}, err
		}
	}
	return net, gross, nil
}
