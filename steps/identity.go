package steps

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/state"
)

// Cluster identity. A cluster is its random ID (state.EnsureClusterID),
// not its name: every resource ohmytalos creates carries the ID as the
// label ohmytalos.io/cluster-id. Lookups select by name and role, then
// adopt only a match whose ID is this state's; destroy deletes only what
// the state lists or what carries the ID.

// applyClusterID returns the cluster's ID for a step that creates or
// labels resources, generating it on the first apply (and for a state
// written before cluster IDs, whose listed resources then get the label).
func applyClusterID(env *engine.Env) (string, error) {
	id, _, err := env.State.EnsureClusterID()
	if err != nil {
		return "", fmt.Errorf("cluster ID: %w", err)
	}
	return id, nil
}

// idDrift makes a step done before the cluster had an ID run again, so
// the resources its state lists get the ID label.
func idDrift(env *engine.Env) string {
	if env.State.ClusterID() == "" {
		return "the cluster has no ID yet: the resources its state lists get the label " + cloud.LabelClusterID
	}
	return ""
}

// ownedByID reports whether labels carry this state's cluster ID.
func ownedByID(st *state.Store, labels map[string]string) bool {
	id := st.ClusterID()
	return id != "" && labels[cloud.LabelClusterID] == id
}

// inState reports whether the state lists a resource of kind with id.
func inState(st *state.Store, kind string, id int64) bool {
	for _, r := range st.Get().Resources {
		if r.ID == id && r.Kind == kind {
			return true
		}
	}
	return false
}

// owns reports whether a resource is this cluster's: listed in its state
// or labelled with its ID.
func owns(st *state.Store, kind string, id int64, labels map[string]string) bool {
	return ownedByID(st, labels) || inState(st, kind, id)
}

// foreignOwner describes who a resource labelled with the cluster's name
// but not its ID belongs to, for errors and the destroy listing.
func foreignOwner(labels map[string]string) string {
	if other := labels[cloud.LabelClusterID]; other != "" {
		return "carries cluster ID " + other + ": another checkout or cluster of the same name owns it"
	}
	return "carries no cluster ID: another checkout or cluster of the same name (or this one, from before cluster IDs, with a lost state) owns it"
}

// foreignError refuses to adopt resources that have the cluster's name but
// not its ID.
func foreignError(st *state.Store, kind string, names []string, labels map[string]string) error {
	mine := st.ClusterID()
	if mine == "" {
		mine = "none yet"
	}
	return fmt.Errorf("%s %s is labelled %s=%s but %s; this state (cluster ID %s) will not adopt, change or delete it: "+
		"run ohmytalos from the checkout that created it, restore that checkout's .ohmytalos/ state (keep its secrets/), or give this spec another name",
		kind, strings.Join(names, ", "), cloud.LabelCluster, labels[cloud.LabelCluster], foreignOwner(labels), mine)
}

// Drift implements engine.Drifter: a network made before cluster IDs gets
// the ID label.
func (s *Network) Drift(ctx context.Context, env *engine.Env) string { return idDrift(env) }

// Drift implements engine.Drifter: servers and volumes made before
// cluster IDs get the ID label.
func (s *Servers) Drift(ctx context.Context, env *engine.Env) string { return idDrift(env) }

// ownedServers lists the servers labelled for the cluster and keeps this
// cluster's (listed in its state or carrying its ID): another checkout's
// servers of the same name are never addressed.
func ownedServers(ctx context.Context, c *hcloud.Client, st *state.Store, cluster string) ([]*hcloud.Server, error) {
	list, err := c.Server.AllWithOpts(ctx, hcloud.ServerListOpts{ListOpts: hcloud.ListOpts{LabelSelector: cloud.ClusterSelector(cluster)}})
	if err != nil {
		return nil, fmt.Errorf("list servers: %w", err)
	}
	out := list[:0]
	for _, sv := range list {
		if owns(st, "server", sv.ID, sv.Labels) {
			out = append(out, sv)
		}
	}
	return out, nil
}

// RequireStateOrBundle refuses what would act on the cluster's resources
// with nothing but its ID: a state folder holding secrets/cluster-id but
// neither state.json nor the Talos secrets bundle (a checkout that kept
// or was given only the ID). The ID alone claims every resource that
// carries it, yet such a checkout cannot manage that cluster (its nodes
// trust only the lost bundle). destroy and an apply limited with --only
// or --from call it; what names the command for the error.
func RequireStateOrBundle(env *engine.Env, what string) error {
	st := env.State
	id := st.ClusterID()
	if id == "" || state.Exists(st.Dir()) || st.HasSecret(secretBundle) {
		return nil
	}
	dir := st.Dir()
	restore := ""
	if _, err := os.Stat(filepath.Join(dir, "state.json.bak")); err == nil {
		restore = fmt.Sprintf("restore the previous state with \"cp %s %s\", or ", filepath.Join(dir, "state.json.bak"), filepath.Join(dir, "state.json"))
	}
	return fmt.Errorf("%s needs the cluster's state: %s holds only the cluster ID %s (secrets/cluster-id), neither state.json nor the Talos secrets bundle (%s), "+
		"and the ID alone would claim every resource labelled %s=%s: nothing was changed. To recover the state, %s"+
		"copy state.json and secrets/ from the checkout that applied the cluster (or from your backup of %s) into %s; "+
		"with the secrets bundle back, \"ohmytalos apply\" rebuilds a lost state.json from it and the resources labelled with the ID",
		what, dir, id, st.SecretPath(secretBundle), cloud.LabelClusterID, id, restore, dir, dir)
}
