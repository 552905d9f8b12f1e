package hcloudfake

import (
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud/schema"
)

// The seeded catalog: Hetzner's locations, server types and load balancer
// types, in EUR. Prices come from the dated price list in assets/pricing
// (catalog_prices.go), the one the offline snapshot is; the monthly figures
// below only price what that list does not (deprecated types, other
// locations). The product reads prices from GET /pricing, never from here.

// vatRate is the German VAT Hetzner charges EU business customers without a VAT ID.
const vatRate = 0.19

// tib is one TiB in bytes, the unit of included_traffic.
const tib = uint64(1) << 40

// locationSpec is one Hetzner location with its datacenter and price factor.
type locationSpec struct {
	id                  int64
	name, desc, country string
	city, zone, dc      string
	dcID                int64
	lat, long           float64
	priceFactor         float64 // US and Singapore cost more than the EU
	trafficTB           float64
	perTBTraffic        float64
}

var locationSpecs = []locationSpec{
	{1, "fsn1", "Falkenstein DC Park 1", "DE", "Falkenstein", "eu-central", "fsn1-dc14", 4, 50.47612, 12.370071, 1, 20, 1},
	{2, "nbg1", "Nuremberg DC Park 1", "DE", "Nuremberg", "eu-central", "nbg1-dc3", 2, 49.452102, 11.076665, 1, 20, 1},
	{3, "hel1", "Helsinki DC Park 1", "FI", "Helsinki", "eu-central", "hel1-dc2", 3, 60.169855, 24.938379, 1, 20, 1},
	{4, "ash", "Ashburn, VA", "US", "Ashburn, VA", "us-east", "ash-dc1", 5, 39.045821, -77.487073, 1.1, 1, 1},
	{5, "hil", "Hillsboro, OR", "US", "Hillsboro, OR", "us-west", "hil-dc1", 6, 45.54222, -122.95194, 1.1, 1, 1},
	{6, "sin", "Singapore", "SG", "Singapore", "ap-southeast", "sin-dc1", 7, 1.283333, 103.833333, 1.25, 0.5, 7.4},
}

var (
	euLocations  = []string{"fsn1", "nbg1", "hel1"}
	allLocations = []string{"fsn1", "nbg1", "hel1", "ash", "hil", "sin"}
)

// serverTypeSpec is one server type. monthly is the EU net price per month.
type serverTypeSpec struct {
	id                      int64
	name, category, cpuType string
	arch                    string
	cores                   int
	memory                  float32
	disk                    int
	monthly                 float64
	locations               []string // where it is listed
	unavailable             []string // listed but not orderable there (deprecated per location)
	deprecated              bool     // deprecated everywhere
}

var serverTypeSpecs = []serverTypeSpec{
	// Cost-optimized shared vCPU, Intel/AMD, EU only (the 2025 generation).
	{id: 114, name: "cx23", category: "cost_optimized", cpuType: "shared", arch: "x86", cores: 2, memory: 4, disk: 40, monthly: 3.99, locations: euLocations},
	{id: 115, name: "cx33", category: "cost_optimized", cpuType: "shared", arch: "x86", cores: 4, memory: 8, disk: 80, monthly: 6.49, locations: euLocations},
	{id: 116, name: "cx43", category: "cost_optimized", cpuType: "shared", arch: "x86", cores: 8, memory: 16, disk: 160, monthly: 11.99, locations: euLocations},
	{id: 117, name: "cx53", category: "cost_optimized", cpuType: "shared", arch: "x86", cores: 16, memory: 32, disk: 320, monthly: 22.99, locations: euLocations},
	// The previous cost-optimized generation, deprecated everywhere.
	{id: 104, name: "cx22", category: "cost_optimized", cpuType: "shared", arch: "x86", cores: 2, memory: 4, disk: 40, monthly: 3.79, locations: euLocations, deprecated: true},
	// Regular performance shared vCPU, AMD. cpx11..cpx51 are no longer
	// orderable in the EU (replaced by cpx22..cpx62) but remain in ash, hil, sin.
	{id: 22, name: "cpx11", category: "regular_purpose", cpuType: "shared", arch: "x86", cores: 2, memory: 2, disk: 40, monthly: 4.99, locations: allLocations, unavailable: euLocations},
	{id: 23, name: "cpx21", category: "regular_purpose", cpuType: "shared", arch: "x86", cores: 3, memory: 4, disk: 80, monthly: 8.99, locations: allLocations, unavailable: euLocations},
	{id: 24, name: "cpx31", category: "regular_purpose", cpuType: "shared", arch: "x86", cores: 4, memory: 8, disk: 160, monthly: 16.49, locations: allLocations, unavailable: euLocations},
	{id: 25, name: "cpx41", category: "regular_purpose", cpuType: "shared", arch: "x86", cores: 8, memory: 16, disk: 240, monthly: 30.49, locations: allLocations, unavailable: euLocations},
	{id: 26, name: "cpx51", category: "regular_purpose", cpuType: "shared", arch: "x86", cores: 16, memory: 32, disk: 360, monthly: 60.49, locations: allLocations, unavailable: euLocations},
	{id: 120, name: "cpx22", category: "regular_purpose", cpuType: "shared", arch: "x86", cores: 2, memory: 4, disk: 80, monthly: 7.99, locations: euLocations},
	{id: 121, name: "cpx32", category: "regular_purpose", cpuType: "shared", arch: "x86", cores: 4, memory: 8, disk: 160, monthly: 13.99, locations: euLocations},
	{id: 122, name: "cpx42", category: "regular_purpose", cpuType: "shared", arch: "x86", cores: 8, memory: 16, disk: 320, monthly: 25.49, locations: euLocations},
	{id: 123, name: "cpx52", category: "regular_purpose", cpuType: "shared", arch: "x86", cores: 12, memory: 24, disk: 480, monthly: 36.49, locations: euLocations},
	{id: 124, name: "cpx62", category: "regular_purpose", cpuType: "shared", arch: "x86", cores: 16, memory: 32, disk: 640, monthly: 51.49, locations: euLocations},
	// Arm64 (Ampere Altra), EU only.
	{id: 45, name: "cax11", category: "cost_optimized", cpuType: "shared", arch: "arm", cores: 2, memory: 4, disk: 40, monthly: 4.49, locations: euLocations},
	{id: 93, name: "cax21", category: "cost_optimized", cpuType: "shared", arch: "arm", cores: 4, memory: 8, disk: 80, monthly: 7.99, locations: euLocations},
	{id: 94, name: "cax31", category: "cost_optimized", cpuType: "shared", arch: "arm", cores: 8, memory: 16, disk: 160, monthly: 15.99, locations: euLocations},
	{id: 95, name: "cax41", category: "cost_optimized", cpuType: "shared", arch: "arm", cores: 16, memory: 32, disk: 320, monthly: 31.49, locations: euLocations},
	// Dedicated vCPU, AMD, everywhere.
	{id: 96, name: "ccx13", category: "general_purpose", cpuType: "dedicated", arch: "x86", cores: 2, memory: 8, disk: 80, monthly: 14.49, locations: allLocations},
	{id: 97, name: "ccx23", category: "general_purpose", cpuType: "dedicated", arch: "x86", cores: 4, memory: 16, disk: 160, monthly: 28.49, locations: allLocations},
	{id: 98, name: "ccx33", category: "general_purpose", cpuType: "dedicated", arch: "x86", cores: 8, memory: 32, disk: 240, monthly: 56.49, locations: allLocations},
	{id: 99, name: "ccx43", category: "general_purpose", cpuType: "dedicated", arch: "x86", cores: 16, memory: 64, disk: 360, monthly: 112.49, locations: allLocations},
	{id: 100, name: "ccx53", category: "general_purpose", cpuType: "dedicated", arch: "x86", cores: 32, memory: 128, disk: 600, monthly: 224.49, locations: allLocations},
	{id: 101, name: "ccx63", category: "general_purpose", cpuType: "dedicated", arch: "x86", cores: 48, memory: 192, disk: 960, monthly: 336.49, locations: allLocations},
}

// lbTypeSpec is one load balancer type; monthly is the EU net price.
type lbTypeSpec struct {
	id                              int64
	name, desc                      string
	conns, services, targets, certs int
	monthly                         float64
}

var lbTypeSpecs = []lbTypeSpec{
	{1, "lb11", "LB11", 10000, 5, 25, 10, 6.57},
	{2, "lb21", "LB21", 20000, 15, 75, 25, 17.87},
	{3, "lb31", "LB31", 40000, 30, 150, 50, 35.75},
}

// Other seeded prices (EUR net).
const (
	floatingIPv4Month = 3.00
	backupPercentage  = "20.00"
)

// systemImageSpec is one public OS image.
type systemImageSpec struct {
	id                      int64
	name, desc, flavor, ver string
	arch                    string
}

var systemImageSpecs = []systemImageSpec{
	{114690387, "debian-12", "Debian 12", "debian", "12", "x86"},
	{114690389, "debian-12", "Debian 12", "debian", "12", "arm"},
	{161547269, "ubuntu-24.04", "Ubuntu 24.04", "ubuntu", "24.04", "x86"},
	{161547270, "ubuntu-24.04", "Ubuntu 24.04", "ubuntu", "24.04", "arm"},
}

// deprecationAnnounced is when the deprecated types were announced as such.
var deprecationAnnounced = time.Date(2025, 10, 16, 0, 0, 0, 0, time.UTC)

// catalog is the immutable, rendered catalog.
type catalog struct {
	locations   []schema.Location
	datacenters []schema.Datacenter
	serverTypes []schema.ServerType
	lbTypes     []schema.LoadBalancerType
	pricing     schema.Pricing
	specs       map[string]serverTypeSpec
}

func price(net float64) schema.Price {
	return schema.Price{Net: strconv.FormatFloat(net, 'f', 10, 64), Gross: strconv.FormatFloat(net*(1+vatRate), 'f', 10, 64)}
}

// hourly is Hetzner's hourly price: the monthly cap spread over ~730 hours, rounded up.
func hourly(monthly float64) float64 {
	return math.Ceil(monthly/730*10000) / 10000
}

func regional(monthly float64, loc locationSpec) float64 {
	return math.Round(monthly*loc.priceFactor*100) / 100
}

func locationSpecByName(name string) (locationSpec, bool) {
	for _, l := range locationSpecs {
		if l.name == name {
			return l, true
		}
	}
	return locationSpec{}, false
}

func newCatalog() *catalog {
	c := &catalog{specs: map[string]serverTypeSpec{}}
	pl := loadPriceList()
	for _, l := range locationSpecs {
		loc := schema.Location{ID: l.id, Name: l.name, Description: l.desc, Country: l.country, City: l.city,
			Latitude: l.lat, Longitude: l.long, NetworkZone: l.zone}
		c.locations = append(c.locations, loc)
	}
	var pst []schema.PricingServerType
	for _, st := range serverTypeSpecs {
		c.specs[st.name] = st
		out := schema.ServerType{ID: st.id, Name: st.name, Description: upper(st.name),
			Category: st.category, Cores: st.cores, Memory: st.memory, Disk: st.disk, StorageType: "local",
			CPUType: st.cpuType, Architecture: st.arch, IncludedTraffic: int64(20 * tib), Deprecated: st.deprecated}
		if st.deprecated {
			out.Deprecation = &schema.DeprecationInfo{Announced: deprecationAnnounced, UnavailableAfter: deprecationAnnounced.AddDate(0, 3, 0)}
		}
		for _, name := range st.locations {
			l, _ := locationSpecByName(name)
			m := pl.monthly(pl.servers, st.name, st.monthly, l)
			out.Prices = append(out.Prices, schema.PricingServerTypePrice{Location: l.name, PriceHourly: price(hourly(m)),
				PriceMonthly: price(m), IncludedTraffic: uint64(l.trafficTB * float64(tib)), PricePerTBTraffic: price(l.perTBTraffic)})
			stl := schema.ServerTypeLocation{ID: l.id, Name: l.name, Available: !st.deprecated && !slices.Contains(st.unavailable, name)}
			if st.deprecated || slices.Contains(st.unavailable, name) {
				stl.Deprecation = &schema.DeprecationInfo{Announced: deprecationAnnounced, UnavailableAfter: deprecationAnnounced.AddDate(0, 3, 0)}
			}
			out.Locations = append(out.Locations, stl)
		}
		c.serverTypes = append(c.serverTypes, out)
		pst = append(pst, schema.PricingServerType{ID: st.id, Name: st.name, Prices: out.Prices})
	}
	for _, l := range locationSpecs {
		dc := schema.Datacenter{ID: l.dcID, Name: l.dc, Description: l.city + " virtual DC", Location: c.location(l.name)}
		types := &schema.DatacenterServerTypes{Supported: []int64{}, Available: []int64{}, AvailableForMigration: []int64{}}
		for _, st := range c.serverTypes {
			for _, stl := range st.Locations {
				if stl.Name != l.name {
					continue
				}
				types.Supported = append(types.Supported, st.ID)
				if stl.Available {
					types.Available = append(types.Available, st.ID)
					types.AvailableForMigration = append(types.AvailableForMigration, st.ID)
				}
			}
		}
		dc.ServerTypes = types
		c.datacenters = append(c.datacenters, dc)
	}
	var plb []schema.PricingLoadBalancerType
	for _, lt := range lbTypeSpecs {
		out := schema.LoadBalancerType{ID: lt.id, Name: lt.name, Description: lt.desc, MaxConnections: lt.conns,
			MaxServices: lt.services, MaxTargets: lt.targets, MaxAssignedCertificates: lt.certs}
		for _, l := range locationSpecs {
			m := pl.monthly(pl.lbs, lt.name, lt.monthly, l)
			out.Prices = append(out.Prices, schema.PricingLoadBalancerTypePrice{Location: l.name, PriceHourly: price(hourly(m)),
				PriceMonthly: price(m), IncludedTraffic: uint64(l.trafficTB * float64(tib)), PricePerTBTraffic: price(l.perTBTraffic)})
		}
		c.lbTypes = append(c.lbTypes, out)
		plb = append(plb, schema.PricingLoadBalancerType{ID: lt.id, Name: lt.name, Prices: out.Prices})
	}
	var ipv4, ipv6 []schema.PricingPrimaryIPTypePrice
	var fip4, fip6 []schema.PricingFloatingIPTypePrice
	for _, l := range locationSpecs {
		ipv4 = append(ipv4, schema.PricingPrimaryIPTypePrice{Location: l.name, PriceHourly: price(hourly(pl.ipv4)), PriceMonthly: price(pl.ipv4)})
		ipv6 = append(ipv6, schema.PricingPrimaryIPTypePrice{Location: l.name, PriceHourly: price(0), PriceMonthly: price(0)})
		fip4 = append(fip4, schema.PricingFloatingIPTypePrice{Location: l.name, PriceMonthly: price(floatingIPv4Month)})
		fip6 = append(fip6, schema.PricingFloatingIPTypePrice{Location: l.name, PriceMonthly: price(floatingIPv4Month)})
	}
	c.pricing = schema.Pricing{
		Currency:          "EUR",
		VATRate:           strconv.FormatFloat(vatRate*100, 'f', 2, 64),
		Image:             schema.PricingImage{PricePerGBMonth: price(pl.image)},
		FloatingIP:        schema.PricingFloatingIP{PriceMonthly: price(floatingIPv4Month)},
		FloatingIPs:       []schema.PricingFloatingIPType{{Type: "ipv4", Prices: fip4}, {Type: "ipv6", Prices: fip6}},
		PrimaryIPs:        []schema.PricingPrimaryIP{{Type: "ipv4", Prices: ipv4}, {Type: "ipv6", Prices: ipv6}},
		Traffic:           schema.PricingTraffic{PricePerTB: price(1)},
		ServerBackup:      schema.PricingServerBackup{Percentage: backupPercentage},
		ServerTypes:       pst,
		LoadBalancerTypes: plb,
		Volume:            schema.PricingVolume{PricePerGBPerMonth: price(pl.volume)},
	}
	return c
}

func upper(s string) string {
	b := []byte(s)
	for i, ch := range b {
		if ch >= 'a' && ch <= 'z' {
			b[i] = ch - 'a' + 'A'
		}
	}
	return string(b)
}

// systemImages returns fresh copies of the public OS images.
func (c *catalog) systemImages(now time.Time) []*schema.Image {
	created := now.AddDate(-1, 0, 0).UTC().Truncate(time.Second)
	var out []*schema.Image
	for _, s := range systemImageSpecs {
		name, ver := s.name, s.ver
		out = append(out, &schema.Image{ID: s.id, Status: "available", Type: "system", Name: &name, Description: s.desc,
			DiskSize: 5, Created: &created, OSFlavor: s.flavor, OSVersion: &ver, Architecture: s.arch, RapidDeploy: true,
			Labels: map[string]string{}})
	}
	return out
}

// location finds a location by name or ID string; the zero Location if none.
func (c *catalog) location(idOrName string) schema.Location {
	for _, l := range c.locations {
		if l.Name == idOrName || strconv.FormatInt(l.ID, 10) == idOrName {
			return l
		}
	}
	return schema.Location{}
}

// serverType finds a server type by ID or name.
func (c *catalog) serverType(v schema.IDOrName) (schema.ServerType, bool) {
	for _, st := range c.serverTypes {
		if (v.ID != 0 && st.ID == v.ID) || (v.ID == 0 && st.Name == v.Name) {
			return st, true
		}
	}
	return schema.ServerType{}, false
}

// lbType finds a load balancer type by ID or name.
func (c *catalog) lbType(v schema.IDOrName) (schema.LoadBalancerType, bool) {
	for _, lt := range c.lbTypes {
		if (v.ID != 0 && lt.ID == v.ID) || (v.ID == 0 && lt.Name == v.Name) {
			return lt, true
		}
	}
	return schema.LoadBalancerType{}, false
}

// idOrNameString shows a catalog reference (server type, load balancer type)
// in error messages: the ID, or the quoted name.
func idOrNameString(v schema.IDOrName) string {
	if v.ID != 0 {
		return strconv.FormatInt(v.ID, 10)
	}
	return strconv.Quote(v.Name)
}
