package hcloudfake

import (
	"fmt"
	"net/http"
)

// limitKinds are the project limits SetLimit can impose.
var limitKinds = map[string]string{"servers": "servers", "placement_groups": "placement groups", "primary_ips": "primary IPs", "volumes": "volumes"}

// SetLimit caps how many resources of a kind ("servers",
// "placement_groups", "primary_ips", "volumes") the project may hold, as a Hetzner
// project's limits do: a create that would exceed it is refused with 403
// resource_limit_exceeded ("Error when exceeding the maximum quantity of a
// resource for an account", API description, Errors). n <= 0 removes the
// limit. It panics on an unknown kind. Hetzner's public API has no
// endpoint that reads these limits (they are shown in the Cloud Console
// under Limits; hetznercloud/hcloud-go#302), so the fake has none either.
func (f *Fake) SetLimit(kind string, n int) {
	if _, ok := limitKinds[kind]; !ok {
		panic(fmt.Sprintf("hcloudfake: no project limit for %q", kind))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	setOrDelete(f.limits, kind, n)
}

// checkLimit refuses to add adding resources of a kind beyond its limit;
// callers hold f.mu.
func (f *Fake) checkLimit(kind string, adding int) error {
	limit, ok := f.limits[kind]
	if !ok || adding == 0 {
		return nil
	}
	have := map[string]int{"servers": len(f.servers), "placement_groups": len(f.pgroups), "primary_ips": len(f.primaryIPs), "volumes": len(f.volumes)}[kind]
	if have+adding <= limit {
		return nil
	}
	return errCode(http.StatusForbidden, "resource_limit_exceeded",
		fmt.Sprintf("project limit exceeded: %d of %d %s in use; delete some or ask Hetzner to raise the limit", have, limit, limitKinds[kind]))
}
