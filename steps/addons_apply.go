package steps

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/ohmytalos/ohmytalos/internal/addons"
	"github.com/ohmytalos/ohmytalos/internal/charts"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/kube"
	"github.com/ohmytalos/ohmytalos/internal/releases"
)

// ensureReleases installs or upgrades every managed release in order,
// from its chart fetched beforehand (fetchCharts, by Key), adopting what
// an earlier ohmytalos applied as typed objects before a first install,
// and leaves handed-over releases alone.
func (s *Addons) ensureReleases(ctx context.Context, env *engine.Env, c *kube.Client, rc *releases.Client, rels []addonRelease, fetched map[string]*charts.Chart, emit engine.Emit) error {
	for _, r := range rels {
		res := "addon/" + r.Addon
		if !r.Managed {
			emit(engine.Event{Kind: engine.KindSkipped, Resource: res,
				Message: fmt.Sprintf("release %s in %s is handed over (addons.%s.managed: false): not installed, upgraded or uninstalled", r.Release.Name, r.Release.Namespace, r.Key)})
			continue
		}
		ch, ok := fetched[r.Key]
		if !ok {
			return fmt.Errorf("add-on %s: its chart was not fetched before the releases were installed", r.Addon)
		}
		cur, err := rc.Get(ctx, r.Release.Name, r.Release.Namespace)
		if err != nil {
			return fmt.Errorf("add-on %s: %w", r.Addon, err)
		}
		if !cur.Found {
			if err := s.adopt(ctx, env, c, rc, r, ch, emit); err != nil {
				return err
			}
		}
		out, err := rc.Ensure(ctx, releases.Spec{Name: r.Release.Name, Namespace: r.Release.Namespace, Chart: ch, Values: r.Values, Timeout: s.d.nodeTimeout(), InstallNoWait: true})
		if err != nil {
			return fmt.Errorf("add-on %s: %w", r.Addon, err)
		}
		emit(releaseEvent(res, r, out))
	}
	return nil
}

// releaseEvent reports what Ensure did: a skip when it reused the release.
func releaseEvent(res string, r addonRelease, out releases.Result) engine.Event {
	msg := fmt.Sprintf("helm release %s in %s: %s, revision %d", r.Release.Name, r.Release.Namespace, out.Change, out.Revision)
	if out.Change.Action == releases.ActionReuse {
		return engine.Event{Kind: engine.KindSkipped, Resource: res, Message: msg}
	}
	return engine.Event{Kind: engine.KindResource, Action: engine.Action(out.Change.Action), Resource: res, Message: msg}
}

// adopt hands the typed objects an earlier ohmytalos applied for the
// add-on (labelled ohmytalos.io/addon=NAME, managed by ohmytalos) that
// the chart renders as well to the release about to be installed, so
// the install updates them in place: none is deleted and recreated.
func (s *Addons) adopt(ctx context.Context, env *engine.Env, c *kube.Client, rc *releases.Client, r addonRelease, ch *charts.Chart, emit engine.Emit) error {
	rendered, err := charts.Render(ch, r.Release, r.Values, env.Spec.Kubernetes.Version)
	if err != nil {
		return fmt.Errorf("add-on %s: %w", r.Addon, err)
	}
	var ours []*unstructured.Unstructured
	for _, o := range append(append([]*unstructured.Unstructured{}, rendered.CRDs...), rendered.Objects...) {
		ns := o.GetNamespace()
		if ns == "" {
			ns = r.Release.Namespace
		}
		live, err := c.Get(ctx, o.GetAPIVersion(), o.GetKind(), ns, o.GetName())
		if errors.Is(err, kube.ErrNotFound) || errors.Is(err, kube.ErrNoKind) {
			continue
		}
		if err != nil {
			return fmt.Errorf("add-on %s: read %s %s before adopting it: %w", r.Addon, o.GetKind(), o.GetName(), err)
		}
		lb := (&unstructured.Unstructured{Object: live}).GetLabels()
		if lb[addons.LabelManagedBy] == addons.ManagedBy && lb[addons.LabelAddon] == r.Addon {
			ours = append(ours, o)
		}
	}
	if len(ours) == 0 {
		return nil
	}
	if err := rc.Adopt(ctx, r.Release.Name, r.Release.Namespace, ours); err != nil {
		return fmt.Errorf("add-on %s: adopt its typed objects into release %s: %w", r.Addon, r.Release.Name, err)
	}
	emit(engine.Event{Kind: engine.KindResource, Action: "adopt", Resource: "addon/" + r.Addon,
		Message: fmt.Sprintf("%d objects an earlier ohmytalos applied get helm's ownership metadata for release %s: updated in place, none recreated", len(ours), r.Release.Name)})
	return nil
}

// uninstallSwitchedOff uninstalls the releases of managed built-in
// add-ons the spec switches off (CRDs and volume data are kept).
func (s *Addons) uninstallSwitchedOff(ctx context.Context, env *engine.Env, rc *releases.Client, emit engine.Emit) error {
	for _, c := range switchedOff(env.Spec) {
		cur, err := rc.Get(ctx, c.Release.Name, c.Release.Namespace)
		if err != nil {
			return fmt.Errorf("add-on %s: %w", c.Addon, err)
		}
		if !cur.Found {
			continue
		}
		if err := rc.Uninstall(ctx, c.Release.Name, c.Release.Namespace); err != nil {
			return fmt.Errorf("add-on %s is switched off: %w", c.Addon, err)
		}
		emit(engine.Event{Kind: engine.KindResource, Action: engine.ActionDelete, Resource: "addon/" + c.Addon,
			Message: fmt.Sprintf("helm release %s in %s uninstalled (addons.%s switched off; CRDs and volume data kept)", c.Release.Name, c.Release.Namespace, c.Key)})
	}
	return nil
}

// uninstallRemovedExtras uninstalls the addons.extra releases an earlier
// apply installed that the spec no longer lists.
func (s *Addons) uninstallRemovedExtras(ctx context.Context, env *engine.Env, rc *releases.Client, rels []addonRelease, emit engine.Emit) error {
	gone, err := removedExtras(env, rels)
	if err != nil {
		return err
	}
	for _, x := range gone {
		cur, err := rc.Get(ctx, x.Name, x.Namespace)
		if err != nil {
			return fmt.Errorf("addons.extra %s (removed from the spec): %w", x.Name, err)
		}
		if !cur.Found {
			continue
		}
		if err := rc.Uninstall(ctx, x.Name, x.Namespace); err != nil {
			return fmt.Errorf("addons.extra %s was removed from the spec: %w", x.Name, err)
		}
		emit(engine.Event{Kind: engine.KindResource, Action: engine.ActionDelete, Resource: "addon/" + x.Name,
			Message: fmt.Sprintf("helm release %s in %s uninstalled: addons.extra no longer lists it", x.Name, x.Namespace)})
	}
	return nil
}
