package steps

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/factory"
	"github.com/ohmytalos/ohmytalos/internal/imaging"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// Images registers the schematics with the Image Factory and makes sure a
// Hetzner snapshot exists for every (schematic, architecture, Talos
// version) the pools need, building the missing ones in parallel.
type Images struct{ d *Deps }

// Name implements engine.Step.
func (s *Images) Name() engine.StepName { return StepImages }

// Title implements engine.Step.
func (s *Images) Title() string { return "Images: schematics and snapshots" }

const dataImages = "images"

// imagesData is what the images step records.
type imagesData struct {
	Schematics map[string]string `json:"schematics"` // schematic name -> ID
	Registered map[string]bool   `json:"registered"` // ID -> registered with the factory
	Snapshots  map[string]int64  `json:"snapshots"`  // imageKey -> snapshot ID
	// Builds are the image builds (run names) started and not seen to
	// finish: after a kill, the next run (holding the state lock, so the
	// killed process is gone) sweeps their resources despite their lease.
	Builds []string `json:"builds,omitempty"`
}

func imageKey(k imaging.Key) string { return k.SchematicID + "/" + k.TalosVersion + "/" + k.Arch }

// need is one image the spec needs.
type need struct {
	schematic string // schematic name
	key       imaging.Key
}

// schematicIDs computes every schematic's ID offline.
func schematicIDs(sp *spec.Spec) (map[string]string, error) {
	all := map[string]spec.Schematic{"controlPlane": sp.Schematics.ControlPlane, "worker": sp.Schematics.Worker}
	for k, v := range sp.Schematics.Extra {
		all[k] = v
	}
	out := map[string]string{}
	for name, sc := range all {
		id, err := factory.New(sc.Extensions, sc.KernelArgs).ID()
		if err != nil {
			return nil, fmt.Errorf("schematics.%s: %w", name, err)
		}
		out[name] = id
	}
	return out, nil
}

// imageNeeds lists the images the nodes need, deduplicated and sorted.
func imageNeeds(sp *spec.Spec) ([]need, map[string]string, error) {
	ids, err := schematicIDs(sp)
	if err != nil {
		return nil, nil, err
	}
	seen := map[string]bool{}
	var out []need
	for _, im := range sp.Images() {
		// Two schematic names with the same content share one image.
		k := imaging.Key{SchematicID: ids[im.Schematic], TalosVersion: sp.Talos.Version, Arch: im.Arch}
		if !seen[imageKey(k)] {
			seen[imageKey(k)] = true
			out = append(out, need{schematic: im.Schematic, key: k})
		}
	}
	sort.Slice(out, func(i, j int) bool { return imageKey(out[i].key) < imageKey(out[j].key) })
	return out, ids, nil
}

// installer is the installer image of a node's schematic.
func (d *Deps) installer(id, version string) string {
	host := "factory.talos.dev"
	if u, err := url.Parse(d.FactoryBaseURL()); err == nil && u.Host != "" {
		host = u.Host
	}
	return factory.InstallerImage(host, id, version)
}

// Plan implements engine.Step.
func (s *Images) Plan(ctx context.Context, env *engine.Env) (engine.Plan, error) {
	needs, _, err := imageNeeds(env.Spec)
	if err != nil {
		return engine.Plan{}, err
	}
	var data imagesData
	if _, err := env.State.GetData(dataImages, &data); err != nil {
		return engine.Plan{}, err
	}
	p := engine.Plan{}
	for _, n := range needs {
		a := engine.ActionCreate
		if data.Snapshots[imageKey(n.key)] != 0 {
			a = engine.ActionReuse
		}
		p.Items = append(p.Items, engine.PlanItem{Action: a, Kind: "snapshot", Name: fmt.Sprintf("talos-%s-%s-%s", n.key.TalosVersion, n.schematic, n.key.Arch),
			Detail: "schematic " + n.key.SchematicID[:12]})
	}
	p.Notes = append(p.Notes, "a missing snapshot is built on a temporary server in rescue mode, deleted afterwards; a matching snapshot (any cluster's) is reused")
	return p, nil
}

// Apply implements engine.Step.
func (s *Images) Apply(ctx context.Context, env *engine.Env, emit engine.Emit) error {
	sp := env.Spec
	clusterID, err := applyClusterID(env)
	if err != nil {
		return err
	}
	needs, ids, err := imageNeeds(sp)
	if err != nil {
		return err
	}
	var data imagesData
	if _, err := env.State.GetData(dataImages, &data); err != nil {
		return err
	}
	if data.Registered == nil {
		data.Registered = map[string]bool{}
	}
	if data.Snapshots == nil {
		data.Snapshots = map[string]int64{}
	}
	data.Schematics = ids
	fc := s.d.Factory()
	for _, name := range slices.Sorted(maps.Keys(ids)) {
		id := ids[name]
		if data.Registered[id] || !usesSchematic(needs, id) {
			continue
		}
		got, err := fc.Register(ctx, schematicOf(sp, name))
		if err != nil {
			return fmt.Errorf("schematics.%s: %w", name, err)
		}
		data.Registered[got] = true
		emit(engine.Event{Kind: engine.KindResource, Action: engine.ActionCreate, Resource: "schematic/" + name, Message: got})
		if err := env.State.PutData(dataImages, data); err != nil {
			return err
		}
	}
	c, err := s.d.HCloud(ctx, sp)
	if err != nil {
		return err
	}
	reqs := make([]imaging.Request, 0, len(needs))
	for _, n := range needs {
		reqs = append(reqs, imaging.Request{
			Key:      n.key,
			ImageURL: factory.DiskImageURL(s.d.FactoryBaseURL(), n.key.SchematicID, n.key.TalosVersion, n.key.Arch),
			Location: sp.Location,
		})
	}
	ended := map[string]bool{}
	for _, r := range data.Builds {
		ended[r] = true
	}
	var mu sync.Mutex // builds start concurrently
	// The snapshots this cluster builds carry its ID (reused ones keep
	// their builder's): destroy --images deletes only those.
	b := imaging.New(c, imaging.Options{Labels: map[string]string{cloud.LabelClusterID: clusterID}, SSHPort: s.d.SSHPort, PollInterval: s.d.PollInterval, Emit: func(ev imaging.Event) {
		emit(imageEvent(ev))
	}, OnStart: func(run string) error {
		mu.Lock()
		defer mu.Unlock()
		data.Builds = append(data.Builds, run)
		return env.State.PutData(dataImages, data)
	}, Ended: func(run string) bool { return ended[run] }})
	if len(ended) > 0 {
		// A killed run's builds: their snapshots may be done, so no build
		// of theirs runs again to sweep what they left.
		swept, err := b.SweepEnded(ctx)
		for _, r := range swept {
			emit(engine.Event{Kind: engine.KindResource, Action: engine.ActionDelete, Resource: strings.Replace(r, " ", "/", 1), Message: "left by an interrupted image build"})
		}
		if err != nil {
			return fmt.Errorf("remove what interrupted image builds left: %w", err)
		}
	}
	got, err := b.Ensure(ctx, reqs)
	mu.Lock()
	defer mu.Unlock()
	for k, id := range got {
		data.Snapshots[imageKey(k)] = id
	}
	if err == nil {
		// Every build finished and cleaned up (or left nothing the
		// per-key sweep of a later build will not find by its lease).
		data.Builds = nil
	}
	if perr := env.State.PutData(dataImages, data); perr != nil && err == nil {
		err = perr
	}
	return err
}

func usesSchematic(needs []need, id string) bool {
	for _, n := range needs {
		if n.key.SchematicID == id {
			return true
		}
	}
	return false
}

func schematicOf(sp *spec.Spec, name string) factory.Schematic {
	sc := sp.Schematics.Worker
	switch name {
	case "controlPlane":
		sc = sp.Schematics.ControlPlane
	case "worker":
	default:
		sc = sp.Schematics.Extra[name]
	}
	return factory.New(sc.Extensions, sc.KernelArgs)
}

// imageEvent turns a builder event into an engine event.
func imageEvent(ev imaging.Event) engine.Event {
	res := fmt.Sprintf("image/%s-%s", ev.Key.TalosVersion, ev.Key.Arch)
	if len(ev.Key.SchematicID) >= 8 {
		res += "-" + ev.Key.SchematicID[:8]
	}
	out := engine.Event{Kind: engine.KindProgress, Resource: res, Message: ev.Stage + ": " + ev.Message,
		Bytes: ev.Bytes, Total: ev.Total, Fraction: ev.Fraction, ID: ev.SnapshotID}
	switch ev.Stage {
	case "done":
		out.Kind, out.Action = engine.KindResource, engine.ActionCreate
	case "reused":
		out.Kind, out.Action = engine.KindResource, engine.ActionReuse
	case "failed":
		out.Kind = engine.KindWarning
		if ev.Err != nil {
			out.Message = ev.Stage + ": " + ev.Err.Error()
		}
	default:
		if ev.Err != nil {
			// A cleanup that failed after the snapshot was published: the
			// next run sweeps the leftovers.
			out.Kind = engine.KindWarning
			out.Message = ev.Stage + ": " + ev.Err.Error()
		}
	}
	return out
}
