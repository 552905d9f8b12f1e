package steps

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/releases"
)

// planClusterTimeout bounds plan's look at the releases in the cluster;
// past it, plan reads the state's record instead.
const planClusterTimeout = 10 * time.Second

// releaseRecordKey is a release's entry in dataAddons.
func releaseRecordKey(addon string) string { return "release/" + addon }

// valuesDigest is a stable digest of merged values (JSON orders map keys).
func valuesDigest(v map[string]any) string {
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(err.Error())
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// releaseLooker reads releases from the cluster for plan; nil when there
// is no cluster to ask (no kubeconfig yet).
type releaseLooker struct {
	rc     *releases.Client
	ctx    context.Context
	failed bool
}

// newReleaseLooker is a looker for env's cluster, nil without one.
func (d *Deps) newReleaseLooker(ctx context.Context, env *engine.Env) *releaseLooker {
	if _, err := env.State.Secret(secretKubeconfig); err != nil {
		return nil
	}
	rc, err := d.Releases(ctx, env)
	if err != nil {
		return nil
	}
	return &releaseLooker{rc: rc, ctx: ctx}
}

// get reads one release; false when the cluster does not answer (then
// every later get is skipped, and plan reads the record).
func (l *releaseLooker) get(name, ns string) (releases.Current, bool) {
	if l == nil || l.failed {
		return releases.Current{}, false
	}
	cur, err := l.rc.Get(l.ctx, name, ns)
	if err != nil {
		l.failed = true
		return releases.Current{}, false
	}
	return cur, true
}

// releasePlanItem is a release's plan line: install (create), upgrade
// (update, with the chart version and the changed value paths), reuse,
// or handed over; from the cluster when it answers, else from the record.
func releasePlanItem(r addonRelease, l *releaseLooker, last addonRecord) engine.PlanItem {
	item := engine.PlanItem{Kind: "addon", Name: r.Addon}
	rel := fmt.Sprintf("helm release %s/%s, chart %s %s", r.Release.Namespace, r.Release.Name, r.Ref.Name, r.Ref.Version)
	if !r.Managed {
		item.Action = engine.ActionReuse
		item.Detail = rel + ": handed over (addons." + r.Key + ".managed: false): ohmytalos does not install, upgrade or uninstall it, and still waits for its workloads"
		return item
	}
	if cur, ok := l.get(r.Release.Name, r.Release.Namespace); ok {
		return changeItem(item, rel, releases.Diff(cur, r.Ref.Version, r.Values), "from the cluster")
	}
	ch := releases.Change{Action: releases.ActionInstall, ToVersion: r.Ref.Version}
	switch {
	case last.Digest == "":
	case last.Version != r.Ref.Version:
		ch = releases.Change{Action: releases.ActionUpgrade, FromVersion: last.Version, ToVersion: r.Ref.Version}
		if last.Digest != valuesDigest(r.Values) {
			ch.Paths = []string{"(values changed since the last apply)"}
		}
	case last.Digest != valuesDigest(r.Values):
		ch = releases.Change{Action: releases.ActionUpgrade, FromVersion: last.Version, ToVersion: r.Ref.Version, Paths: []string{"(values changed since the last apply)"}}
	default:
		ch = releases.Change{Action: releases.ActionReuse, FromVersion: last.Version, ToVersion: r.Ref.Version}
	}
	return changeItem(item, rel, ch, "from the state's record: the cluster did not answer")
}

// changeItem fills a plan line from a release change.
func changeItem(item engine.PlanItem, rel string, ch releases.Change, source string) engine.PlanItem {
	item.Detail = rel + " (" + source + ")"
	switch ch.Action {
	case releases.ActionInstall:
		item.Action = engine.ActionCreate
		item.Detail = "install " + item.Detail
	case releases.ActionReuse:
		item.Action = engine.ActionReuse
	default:
		item.Action = engine.ActionUpdate
		item.Detail = "upgrade " + item.Detail
		if ch.FromVersion != ch.ToVersion {
			item.Changes = append(item.Changes, engine.Change{Field: "chart", Old: ch.FromVersion, New: ch.ToVersion})
		}
		if len(ch.Paths) > 0 {
			item.Changes = append(item.Changes, engine.Change{Field: "values", Old: "as installed", New: strings.Join(ch.Paths, ", ") + " changed"})
		}
		if ch.Reason != "" {
			item.Changes = append(item.Changes, engine.Change{Field: "status", Old: ch.Reason, New: "deployed"})
		}
	}
	return item
}

// recordReleases stores, per managed release, its chart version and a
// digest of its values, for plan when the cluster does not answer.
func recordReleases(env *engine.Env, rels []addonRelease) error {
	var rec map[string]addonRecord
	if _, err := env.State.GetData(dataAddons, &rec); err != nil {
		return err
	}
	if rec == nil {
		rec = map[string]addonRecord{}
	}
	for k := range rec {
		if strings.HasPrefix(k, releaseRecordKey("")) {
			delete(rec, k)
		}
	}
	for _, r := range rels {
		if r.Managed {
			rec[releaseRecordKey(r.Addon)] = addonRecord{Version: r.Ref.Version, Digest: valuesDigest(r.Values),
				Extra: r.extra(), Namespace: r.Release.Namespace}
		}
	}
	return env.State.PutData(dataAddons, rec)
}

// removedExtra is a release of addons.extra an earlier apply installed
// that the spec no longer lists.
type removedExtra struct{ Name, Namespace string }

// removedExtras are the recorded addons.extra releases rels no longer
// holds (by name and namespace), sorted by name.
func removedExtras(env *engine.Env, rels []addonRelease) ([]removedExtra, error) {
	var rec map[string]addonRecord
	if _, err := env.State.GetData(dataAddons, &rec); err != nil {
		return nil, err
	}
	want := map[removedExtra]bool{}
	for _, r := range rels {
		want[removedExtra{r.Release.Name, r.Release.Namespace}] = true
	}
	var out []removedExtra
	for k, v := range rec {
		name, ok := strings.CutPrefix(k, releaseRecordKey(""))
		if x := (removedExtra{name, v.Namespace}); ok && v.Extra && !want[x] {
			out = append(out, x)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}
