package steps

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/ohmytalos/ohmytalos/internal/addons"
	"github.com/ohmytalos/ohmytalos/internal/engine"
)

// dataAddons records, per add-on, what the last apply sent to the cluster,
// so plan can tell an unchanged add-on (reuse) from a changed one (update,
// with the old and new version) without asking the cluster.
const dataAddons = "addons"

// addonRecord is one add-on's entry in dataAddons. Digest covers the
// rendered objects with the token redacted: a rotated token is not a
// change plan can see, a changed version or value is.
type addonRecord struct {
	Version string `json:"version,omitempty"`
	Digest  string `json:"digest"`
	// Extra marks a release of addons.extra, with its namespace: one
	// removed from the spec is uninstalled by the next apply.
	Extra     bool   `json:"extra,omitempty"`
	Namespace string `json:"namespace,omitempty"`
}

// planInputs are the inputs plan and the record render with: the network
// ID from the state and the redacted token, never a looked-up secret.
func planInputs(env *engine.Env) addons.Inputs {
	in := addons.Inputs{Token: addons.Redacted, Backup: plannedBackupInputs(), ClusterID: env.State.ClusterID()}
	if r, ok := env.State.Resource(keyNetwork); ok {
		in.NetworkID = r.ID
	}
	return in
}

// planAddonInputs are planInputs with the ingress load balancer's IPv6,
// which apply's values carry (addonInputs): without it, plan would list
// Traefik's values as changed after every apply with domains on a load
// balancer with IPv6. d is nil when plan runs without clients.
func (d *Deps) planAddonInputs(ctx context.Context, env *engine.Env) (addons.Inputs, error) {
	in := planInputs(env)
	if d == nil {
		return in, nil
	}
	v6, err := d.ingressLBIPv6(ctx, env)
	if err != nil {
		return in, err
	}
	in.IngressLBIPv6 = v6
	return in, nil
}

// addonDigest is a stable digest of an add-on's rendered objects.
func addonDigest(a addons.Addon) string {
	h := sha256.New()
	for _, o := range a.Objects {
		b, err := json.Marshal(o)
		if err != nil {
			// Objects are JSON maps; an unencodable one changes the digest.
			b = []byte(err.Error())
		}
		h.Write(b)
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// recordAddons stores what the apply just sent (rendered with planInputs).
func recordAddons(env *engine.Env) error {
	rendered, err := addons.Render(env.Spec, planInputs(env))
	if err != nil {
		return err
	}
	rec := map[string]addonRecord{}
	for _, a := range rendered {
		rec[a.Name] = addonRecord{Version: a.Version, Digest: addonDigest(a)}
	}
	return env.State.PutData(dataAddons, rec)
}

// addonPlanItem is the plan line of one add-on against its last record:
// create when never applied, reuse when unchanged, update otherwise (with
// the version change when there is one).
func addonPlanItem(a addons.Addon, last addonRecord, detail string) engine.PlanItem {
	item := engine.PlanItem{Action: engine.ActionCreate, Kind: "addon", Name: a.Name, Detail: detail}
	switch {
	case last.Digest == "":
	case last.Digest == addonDigest(a):
		item.Action = engine.ActionReuse
	default:
		item.Action = engine.ActionUpdate
		if last.Version != a.Version {
			item.Changes = append(item.Changes, engine.Change{Field: "version", Old: last.Version, New: a.Version})
		} else {
			item.Changes = append(item.Changes, engine.Change{Field: "objects", Old: "as last applied", New: "changed values"})
		}
	}
	return item
}
