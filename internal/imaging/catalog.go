package imaging

import (
	"context"
	"sync"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
)

// catalog remembers, for one Builder, what every build asks Hetzner the
// same way: the server types and the system images per architecture. The
// builds of one run share one request each instead of one per build. A
// failed lookup is not remembered.
type catalog struct {
	mu     sync.Mutex // held across a lookup: concurrent builds wait for the first
	types  []*hcloud.ServerType
	system map[hcloud.Architecture][]*hcloud.Image
}

// serverTypes lists the server types once per Builder.
func (b *Builder) serverTypes(ctx context.Context) ([]*hcloud.ServerType, error) {
	b.cat.mu.Lock()
	defer b.cat.mu.Unlock()
	if b.cat.types != nil {
		return b.cat.types, nil
	}
	types, err := b.c.ServerType.All(ctx)
	if err != nil {
		return nil, err
	}
	b.cat.types = types
	return types, nil
}

// systemImages lists the system images of arch once per Builder.
func (b *Builder) systemImages(ctx context.Context, arch hcloud.Architecture) ([]*hcloud.Image, error) {
	b.cat.mu.Lock()
	defer b.cat.mu.Unlock()
	if imgs, ok := b.cat.system[arch]; ok {
		return imgs, nil
	}
	imgs, err := b.c.Image.AllWithOpts(ctx, hcloud.ImageListOpts{
		Type:         []hcloud.ImageType{hcloud.ImageTypeSystem},
		Architecture: []hcloud.Architecture{arch},
	})
	if err != nil {
		return nil, err
	}
	if b.cat.system == nil {
		b.cat.system = map[hcloud.Architecture][]*hcloud.Image{}
	}
	b.cat.system[arch] = imgs
	return imgs, nil
}
