package imaging

import (
	"context"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
)

// defaultLocation hosts the temporary servers when a request names none.
const defaultLocation = "fsn1"

// chooseServerType returns the server type for a temporary server: the
// requested one if set (checked for architecture and availability), else
// the cheapest orderable type of the architecture at the location.
//
// "Orderable" follows hcloud-go v2.52 (server_type.go): ServerType.Locations
// lists per-location Available and deprecation, superseding the type-wide
// DeprecatableResource; prices come from ServerType.Pricings per location.
func (b *Builder) chooseServerType(ctx context.Context, arch, location, requested string) (*hcloud.ServerType, error) {
	types, err := b.serverTypes(ctx)
	if err != nil {
		return nil, fmt.Errorf("list server types: %w", err)
	}
	want := hcloudArch(arch)
	type candidate struct {
		st    *hcloud.ServerType
		price *big.Rat
	}
	var cands []candidate
	var names []string
	for _, st := range types {
		if requested != "" && st.Name != requested {
			continue
		}
		if st.Architecture != want {
			if requested != "" {
				return nil, fmt.Errorf("server type %s is %s, not %s; pick a type of the image's architecture or leave it empty", requested, st.Architecture, arch)
			}
			continue
		}
		if !orderable(st, location) {
			if requested != "" {
				return nil, fmt.Errorf("server type %s is not orderable in %s; leave the type empty to use the cheapest available one", requested, location)
			}
			continue
		}
		price, ok := monthlyNet(st, location)
		if !ok {
			price = new(big.Rat).SetInt64(1 << 40) // unknown price: last resort
		}
		cands = append(cands, candidate{st, price})
		names = append(names, st.Name)
	}
	if len(cands) == 0 {
		if requested != "" {
			return nil, fmt.Errorf("server type %s does not exist; see hcloud server-type list", requested)
		}
		return nil, fmt.Errorf("no %s server type is orderable in %s; try another location (fsn1, nbg1, hel1)", arch, location)
	}
	slices.SortStableFunc(cands, func(a, b candidate) int {
		if c := a.price.Cmp(b.price); c != 0 {
			return c
		}
		return strings.Compare(a.st.Name, b.st.Name)
	})
	return cands[0].st, nil
}

func orderable(st *hcloud.ServerType, location string) bool {
	if len(st.Locations) > 0 {
		for _, l := range st.Locations {
			if l.Location != nil && l.Location.Name == location {
				return l.Available && !l.IsDeprecated()
			}
		}
		return false
	}
	// Older API answers without per-location data: fall back to prices.
	if st.IsDeprecated() {
		return false
	}
	_, ok := monthlyNet(st, location)
	return ok
}

func monthlyNet(st *hcloud.ServerType, location string) (*big.Rat, bool) {
	for _, p := range st.Pricings {
		if p.Location != nil && p.Location.Name == location {
			r, ok := new(big.Rat).SetString(p.Monthly.Net)
			return r, ok
		}
	}
	return nil, false
}

// debianImage returns the newest Debian system image of the architecture.
// It only boots into the rescue system, but a server needs an image.
func (b *Builder) debianImage(ctx context.Context, arch string) (*hcloud.Image, error) {
	imgs, err := b.systemImages(ctx, hcloudArch(arch))
	if err != nil {
		return nil, fmt.Errorf("list system images: %w", err)
	}
	var best *hcloud.Image
	bestVer := -1
	for _, img := range imgs {
		if img.OSFlavor != "debian" || img.IsDeprecated() {
			continue
		}
		v, err := strconv.Atoi(strings.SplitN(img.OSVersion, ".", 2)[0])
		if err != nil {
			v = 0
		}
		if v > bestVer {
			best, bestVer = img, v
		}
	}
	if best == nil {
		return nil, fmt.Errorf("no debian system image for %s found; the temporary server needs one to exist", arch)
	}
	return best, nil
}
