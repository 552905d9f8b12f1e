package reconcile

import "github.com/hetznercloud/hcloud-go/v2/hcloud"

// Base is what each kind's service is: the kind's Finder (Find, Get and
// List), its narrow client C, and the waiter and retry its in-place
// changes use. Each kind's package defines its Service as a Base, so
// the kinds share one constructor and one set of fields.
type Base[T comparable, O any, C Lookup[T, O]] struct {
	Finder[T, O]
	// Client is the part of the kind's hcloud-go client the service uses.
	Client C
	// Actions waits for the actions the service starts; nil when the
	// service only finds and plans.
	Actions ActionWaiter
	// Retry calls again while a call fails in a way worth retrying
	// (Hetzner's "locked"); nil calls once.
	Retry Retry
}

// NewBase returns the service of kind (as messages name it, such as
// "network") over client: opts wraps the common list options in the
// kind's own, meta reads a resource's ID, name and labels.
func NewBase[T comparable, O any, C Lookup[T, O]](kind string, client C, opts func(hcloud.ListOpts) O, meta func(T) Meta, actions ActionWaiter, retry Retry) *Base[T, O, C] {
	return &Base[T, O, C]{Finder: NewKindFinder(kind, client, opts, meta), Client: client, Actions: actions, Retry: retry}
}
