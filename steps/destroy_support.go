package steps

import (
	"maps"
	"slices"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/state"
)

// What the destroy package (steps/destroy) reads of the steps' ownership
// rules and state layout: exported here so the state keys stay the steps'
// own.

// OwnedByID reports whether labels carry this state's cluster ID.
func OwnedByID(st *state.Store, labels map[string]string) bool { return ownedByID(st, labels) }

// InState reports whether the state lists a resource of kind with id.
func InState(st *state.Store, kind string, id int64) bool { return inState(st, kind, id) }

// ForeignOwner describes who a resource labelled with the cluster's name
// but not its ID belongs to.
func ForeignOwner(labels map[string]string) string { return foreignOwner(labels) }

// SnapshotIDs are the snapshots the images step recorded, by image key.
func SnapshotIDs(st *state.Store) (map[string]int64, error) {
	var data imagesData
	if _, err := st.GetData(dataImages, &data); err != nil {
		return nil, err
	}
	return data.Snapshots, nil
}

// ForgetDestroyed clears the state of what destroy deleted, so that a
// re-apply makes the same cluster anew: every resource but the images',
// every step but secrets (and images, unless snapshotsDeleted). The client
// configs name servers that are gone: they are kept as timestamped
// backups, never deleted. The bundle and the disk passphrase stay.
func ForgetDestroyed(st *state.Store, snapshotsDeleted bool) error {
	err := st.Update(func(s *state.State) error {
		keys := slices.Sorted(maps.Keys(s.Resources))
		for _, k := range keys {
			if k == keyNetwork || s.Resources[k].Step != string(StepImages) {
				delete(s.Resources, k)
			}
		}
		for name := range s.Steps {
			if step := engine.StepName(name); step != StepSecrets && (step != StepImages || snapshotsDeleted) {
				delete(s.Steps, name)
			}
		}
		if snapshotsDeleted {
			delete(s.Data, dataImages)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, name := range []string{secretKubeconfig, secretTalosconfig} {
		if err := st.RetireSecret(name); err != nil {
			return err
		}
	}
	return nil
}
