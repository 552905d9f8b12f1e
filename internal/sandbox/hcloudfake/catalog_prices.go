package hcloudfake

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/hetznercloud/hcloud-go/v2/hcloud/schema"

	"github.com/ohmytalos/ohmytalos/assets"
)

// priceListFile is the dated Hetzner price list the sandbox serves. It is
// the same data file as ohmytalos' offline snapshot, so that the sandbox's
// GET /pricing and the offline figures come from one set of dated facts;
// only the data is shared, the fake reads it with its own code.
const priceListFile = "pricing/hetzner-pricing.json"

// priceList is what the fake takes from the file: net prices by name and
// location, and the per-unit prices.
type priceList struct {
	servers, lbs        map[string]map[string]float64 // name -> location -> monthly net
	volume, image, ipv4 float64
}

// loadPriceList reads the embedded price list. It panics when the file is
// missing or malformed: the binary was built wrong.
func loadPriceList() priceList {
	raw, err := assets.Pricing.ReadFile(priceListFile)
	if err != nil {
		panic(fmt.Sprintf("hcloudfake: the price list %s is not embedded: %v", priceListFile, err))
	}
	var doc schema.PricingGetResponse
	if err := json.Unmarshal(raw, &doc); err != nil {
		panic(fmt.Sprintf("hcloudfake: the price list %s is not valid JSON: %v", priceListFile, err))
	}
	p := doc.Pricing
	pl := priceList{servers: map[string]map[string]float64{}, lbs: map[string]map[string]float64{},
		volume: num(p.Volume.PricePerGBPerMonth.Net), image: num(p.Image.PricePerGBMonth.Net)}
	for _, st := range p.ServerTypes {
		pl.servers[st.Name] = map[string]float64{}
		for _, pr := range st.Prices {
			pl.servers[st.Name][pr.Location] = num(pr.PriceMonthly.Net)
		}
	}
	for _, lt := range p.LoadBalancerTypes {
		pl.lbs[lt.Name] = map[string]float64{}
		for _, pr := range lt.Prices {
			pl.lbs[lt.Name][pr.Location] = num(pr.PriceMonthly.Net)
		}
	}
	for _, ip := range p.PrimaryIPs {
		if ip.Type == "ipv4" && len(ip.Prices) > 0 {
			pl.ipv4 = num(ip.Prices[0].PriceMonthly.Net)
		}
	}
	return pl
}

// num parses a decimal price; the list's prices are well-formed.
func num(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		panic(fmt.Sprintf("hcloudfake: price %q in %s: %v", s, priceListFile, err))
	}
	return v
}

// monthly is the net monthly price of a type in a location: the list's,
// else the fake's own EU figure scaled for the location (types and
// locations the list does not price, such as deprecated ones).
func (pl priceList) monthly(byName map[string]map[string]float64, name string, own float64, loc locationSpec) float64 {
	if v, ok := byName[name][loc.name]; ok {
		return v
	}
	return regional(own, loc)
}
