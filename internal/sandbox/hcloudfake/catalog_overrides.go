package hcloudfake

import (
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud/schema"
)

// withdrawal is a server type Hetzner stopped selling in one location (or
// everywhere when location is ""): GET /server_types then lists it with
// available false and a deprecation, as the API description says of
// ServerType.locations[].deprecation and .available ("whether the server
// type can currently be ordered in this location"; hcloud-openapi,
// components.schemas.server_type, and hcloud-go v2.52 server_type.go
// ServerTypeLocation).
type withdrawal struct {
	serverType, location string
	info                 schema.DeprecationInfo
}

// Withdraw makes serverType no longer orderable in location ("" for every
// location and the type as a whole), announced on announced and gone after
// unavailableAfter: GET /server_types shows it, and creating a server of it
// there is refused with 412 resource_unavailable. Unlike SetUnavailable
// (sold out between listing and ordering), the catalog says so.
func (f *Fake) Withdraw(serverType, location string, announced, unavailableAfter time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.withdrawn = append(f.withdrawn, withdrawal{serverType: serverType, location: location,
		info: schema.DeprecationInfo{Announced: announced.UTC(), UnavailableAfter: unavailableAfter.UTC()}})
}

// renderServerType applies the withdrawals to a catalog server type;
// callers hold f.mu. The catalog itself stays immutable.
func (f *Fake) renderServerType(st schema.ServerType) schema.ServerType {
	if len(f.withdrawn) == 0 {
		return st
	}
	st.Locations = append([]schema.ServerTypeLocation(nil), st.Locations...)
	for _, w := range f.withdrawn {
		if w.serverType != st.Name {
			continue
		}
		info := w.info
		if w.location == "" {
			st.Deprecated, st.Deprecation = true, &info
		}
		for i := range st.Locations {
			if w.location == "" || st.Locations[i].Name == w.location {
				st.Locations[i].Available = false
				st.Locations[i].Deprecation = &info
			}
		}
	}
	return st
}

// serverTypes returns the catalog's server types as they are now.
func (f *Fake) serverTypes() []schema.ServerType {
	out := make([]schema.ServerType, len(f.cat.serverTypes))
	for i, st := range f.cat.serverTypes {
		out[i] = f.renderServerType(st)
	}
	return out
}
