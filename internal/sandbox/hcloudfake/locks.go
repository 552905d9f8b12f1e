package hcloudfake

import (
	"fmt"
	"net/http"
	"slices"
)

// lockable are the resource types an action locks. Hetzner answers HTTP
// 423 "locked" ("The item you are trying to access is locked (there is
// already an Action running)", API description, Errors) to a new action on
// a server, load balancer, network or volume while another one runs on it.
// hcloud-go v2.52.0 does not retry it (hcloud/client_handler_retry.go,
// retryPolicy retries conflict, rate_limit_exceeded, bad_gateway and
// timeout only): callers must.
var lockable = []string{"server", "load_balancer", "network", "volume"}

// lockRefs returns what an action on resources locks: the resource it runs
// on (the first reference), and for volume attach and detach the server too,
// as attaching a volume or a network locks the server.
func lockRefs(command string, resources []actionRef) []actionRef {
	var out []actionRef
	for i, r := range resources {
		if !slices.Contains(lockable, r.Type) {
			continue
		}
		if i == 0 || ((command == "attach_volume" || command == "detach_volume") && r.Type == "server") {
			out = append(out, r)
		}
	}
	return out
}

// lockedBy returns the running action that holds a lock on the resource, or
// nil; callers hold f.mu.
func (f *Fake) lockedBy(typ string, id int64) *action {
	var found *action
	for _, a := range f.actions {
		if a.a.Status != "running" || !slices.ContainsFunc(a.locks, func(r actionRef) bool { return r.Type == typ && r.ID == id }) {
			continue
		}
		if found == nil || a.a.ID < found.a.ID {
			found = a
		}
	}
	return found
}

// checkUnlocked refuses a new action on a locked resource with 423 locked.
func (f *Fake) checkUnlocked(typ string, id int64) error {
	a := f.lockedBy(typ, id)
	if a == nil {
		return nil
	}
	return errCode(http.StatusLocked, "locked",
		fmt.Sprintf("%s %d is locked: action %d (%s) is still running on it; wait for it and retry", typ, id, a.a.ID, a.a.Command))
}
