package addons

import (
	"sort"

	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// TypeRef is an apiVersion and kind.
type TypeRef struct {
	APIVersion, Kind string
}

// neverPruned are kinds whose deletion takes data with it: deleting a CRD
// deletes every resource of it (Longhorn's volume records), deleting a
// namespace deletes everything in it. Switching an add-on off leaves them.
var neverPruned = map[string]bool{"CustomResourceDefinition": true, "Namespace": true}

// PrunableKinds lists every kind any add-on renders (with every add-on
// switched on), sorted, minus the kinds never pruned. Pruning lists these
// kinds by the managed-by label.
func PrunableKinds() []TypeRef {
	sp := spec.Default("kinds")
	sp.Pools = append(sp.Pools, spec.Pool{Name: "storage", Count: 1, Storage: true})
	sp.Default()
	seen := map[TypeRef]bool{}
	for _, name := range Names() {
		a, err := renderOne(sp, Inputs{}, name)
		if err != nil {
			continue
		}
		for _, o := range a.Objects {
			if !neverPruned[o.Kind()] {
				seen[TypeRef{o.APIVersion(), o.Kind()}] = true
			}
		}
	}
	out := make([]TypeRef, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].APIVersion != out[j].APIVersion {
			return out[i].APIVersion < out[j].APIVersion
		}
		return out[i].Kind < out[j].Kind
	})
	return out
}

// Prunable reports whether a live object labelled as ours should go: its
// add-on is not rendered any more, or the add-on no longer renders it.
// desired holds the Ref of every rendered object.
func Prunable(kind, ref string, desired map[string]bool) bool {
	return !neverPruned[kind] && !desired[ref]
}
