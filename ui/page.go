package ui

import "github.com/ohmytalos/ohmytalos/ui/common"

// page is what every screen embeds: its own copy of the common value
// (content size, styles, keys), in soft-serve's shape. The root holds the
// original and hands each page a new copy on every resize (setCommon), so
// no page reads another's or the root's.
type page struct{ common.Common }

// setCommon replaces the page's copy of the common value.
func (p *page) setCommon(c common.Common) { p.Common = c }
