package pricing

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	"github.com/hetznercloud/hcloud-go/v2/hcloud/schema"

	"github.com/ohmytalos/ohmytalos/assets"
)

// Paths of the offline snapshot inside assets.Pricing.
const (
	offlinePricingFile     = "pricing/hetzner-pricing.json"
	offlineServerTypesFile = "pricing/hetzner-server-types.json"
)

// offlinePricing is the snapshot's GET /pricing body plus its "_meta" object.
type offlinePricing struct {
	schema.PricingGetResponse
	Meta struct {
		AsOf      string   `json:"as_of"`
		Sources   []string `json:"sources"`
		Estimated []string `json:"estimated"`
		Notes     string   `json:"notes"`
	} `json:"_meta"`
}

// Offline returns the catalog of the price snapshot embedded in the binary
// (assets/pricing), labelled with its date.
func Offline() (*Catalog, error) {
	rawPricing, err := assets.Pricing.ReadFile(offlinePricingFile)
	if err != nil {
		return nil, fmt.Errorf("reading the embedded price snapshot %s failed: %w (the binary was built without assets/pricing)", offlinePricingFile, err)
	}
	rawTypes, err := assets.Pricing.ReadFile(offlineServerTypesFile)
	if err != nil {
		return nil, fmt.Errorf("reading the embedded server types %s failed: %w (the binary was built without assets/pricing)", offlineServerTypesFile, err)
	}
	var p offlinePricing
	if err := json.Unmarshal(rawPricing, &p); err != nil {
		return nil, fmt.Errorf("the embedded price snapshot %s is not valid JSON: %w", offlinePricingFile, err)
	}
	var types schema.ServerTypeListResponse
	if err := json.Unmarshal(rawTypes, &types); err != nil {
		return nil, fmt.Errorf("the embedded server types %s are not valid JSON: %w", offlineServerTypesFile, err)
	}
	c, err := newCatalog(p.Pricing, types.ServerTypes)
	if err != nil {
		return nil, fmt.Errorf("the embedded price snapshot is inconsistent: %w", err)
	}
	c.AsOf = p.Meta.AsOf
	c.Sources = append(append([]string{}, p.Meta.Sources...), prefixed("estimated: ", p.Meta.Estimated)...)
	c.Notes = p.Meta.Notes
	return c, nil
}

// prefixed returns each of items with prefix in front.
func prefixed(prefix string, items []string) []string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = prefix + s
	}
	return out
}

// FromAPI fetches a live catalog from the Hetzner API: GET /pricing for the
// prices and GET /server_types (all pages) for the types' details and their
// per-location availability. It makes two or more requests, well within the
// 3600 requests/hour budget.
func FromAPI(ctx context.Context, c *hcloud.Client) (*Catalog, error) {
	// GET /pricing is decoded into the schema directly rather than through
	// c.Pricing.Get: hcloud-go v2.52.0's PricingFromSchema sizes the primary
	// IP prices by len(FloatingIPs) (schema_gen.go, primaryIPPricingFromSchema)
	// and panics when the API lists more primary than floating IP types.
	req, err := c.NewRequest(ctx, http.MethodGet, "/pricing", nil)
	if err != nil {
		return nil, fmt.Errorf("preparing the Hetzner API request GET /pricing failed: %w", err)
	}
	var body schema.PricingGetResponse
	if _, err := c.Do(req, &body); err != nil {
		return nil, fmt.Errorf("fetching prices from the Hetzner API (GET /pricing) failed: %w; check the API token and network access, or continue with the offline prices", err)
	}
	types, err := c.ServerType.All(ctx)
	if err != nil {
		return nil, fmt.Errorf("fetching server types from the Hetzner API (GET /server_types) failed: %w; check the API token and network access, or continue with the offline prices", err)
	}
	st := make([]schema.ServerType, 0, len(types))
	for _, t := range types {
		st = append(st, hcloud.SchemaFromServerType(t))
	}
	cat, err := newCatalog(body.Pricing, st)
	if err != nil {
		return nil, fmt.Errorf("the Hetzner API returned prices ohmytalos cannot read: %w", err)
	}
	cat.Live = true
	cat.AsOf = time.Now().UTC().Format(time.DateOnly)
	cat.Sources = []string{"GET /pricing", "GET /server_types"}
	return cat, nil
}
