// Package assets holds the data files embedded into the ohmytalos binary.
package assets

import "embed"

// Pricing holds the offline Hetzner price snapshot: pricing/hetzner-pricing.json
// (the body of GET /pricing plus a "_meta" object naming date and sources) and
// pricing/hetzner-server-types.json (the body of GET /server_types).
//
//go:embed pricing/*.json
var Pricing embed.FS
