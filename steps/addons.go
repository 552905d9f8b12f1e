package steps

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ohmytalos/ohmytalos/internal/addons"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/kube"
)

// Addons installs the in-cluster add-ons (Cilium, the Hetzner cloud
// controller and CSI driver, Longhorn, metrics-server, Traefik) as Helm
// releases of their upstream charts, and the few typed objects no chart
// renders by server-side apply, once the Kubernetes API answers; it
// uninstalls those switched off, and waits until every node is Ready with
// a provider ID, the add-on workloads are ready and the ingress load
// balancer's targets are healthy. Applying is idempotent: a re-run or a
// resumed run converges.
type Addons struct{ d *Deps }

// Name implements engine.Step.
func (s *Addons) Name() engine.StepName { return StepAddons }

// Title implements engine.Step.
func (s *Addons) Title() string { return "Add-ons: Cilium, Hetzner CCM and CSI" }

// After implements engine.Dependent.
func (s *Addons) After() []engine.StepName { return []engine.StepName{StepBootstrap} }

// Plan implements engine.Step: the typed objects against the state's
// record, each release as install, upgrade, reuse or handed over (from
// the cluster when it answers, else from the record), and a warning per
// required value the operator's values override.
func (s *Addons) Plan(ctx context.Context, env *engine.Env) (engine.Plan, error) {
	in, err := s.d.planAddonInputs(ctx, env)
	if err != nil {
		return engine.Plan{}, err
	}
	rendered, err := addons.Render(env.Spec, in)
	if err != nil {
		return engine.Plan{}, err
	}
	rels, err := wantedReleases(env.Spec, in)
	if err != nil {
		return engine.Plan{}, err
	}
	var applied map[string]addonRecord
	if _, err := env.State.GetData(dataAddons, &applied); err != nil {
		return engine.Plan{}, err
	}
	p := engine.Plan{}
	for _, a := range rendered {
		if _, fromChart := addons.ChartOf(a.Name); !fromChart {
			p.Items = append(p.Items, addonPlanItem(a, applied[a.Name], fmt.Sprintf("%d typed objects", len(a.Objects))))
		}
	}
	var looker *releaseLooker
	if s.d != nil {
		lctx, cancel := context.WithTimeout(ctx, planClusterTimeout)
		defer cancel()
		looker = s.d.newReleaseLooker(lctx, env)
	}
	for _, r := range rels {
		item := releasePlanItem(r, looker, applied[releaseRecordKey(r.Addon)])
		if r.Addon == addons.Cilium {
			item.Detail += ", " + addons.CiliumSummary(env.Spec)
		}
		p.Items = append(p.Items, item)
	}
	// Asked only when the releases were read from the cluster: one that
	// did not answer is not asked twice.
	pols, err := s.d.lookClusterPolicies(ctx, env, looker != nil && !looker.failed)
	if err != nil {
		return engine.Plan{}, err
	}
	for _, pol := range pols {
		p.Items = append(p.Items, clusterPolicyPlanItem(pol, applied[addons.Cilium].Digest != ""))
	}
	gone, err := removedExtras(env, rels)
	if err != nil {
		return engine.Plan{}, err
	}
	for _, x := range gone {
		p.Items = append(p.Items, engine.PlanItem{Action: engine.ActionDelete, Kind: "addon", Name: x.Name,
			Detail: "uninstall helm release " + x.Namespace + "/" + x.Name + ": addons.extra no longer lists it"})
	}
	p.Notes = append(p.Notes, requiredWarnings(rels)...)
	on := addons.Enabled(env.Spec)
	for _, n := range addons.Names() {
		if on[n] {
			continue
		}
		if c, ok := addons.ChartOf(n); ok {
			p.Notes = append(p.Notes, n+" is switched off: its helm release "+c.Release.Name+" is uninstalled when present (CRDs and volume data are kept)")
			continue
		}
		p.Notes = append(p.Notes, n+" is switched off: objects it left in the cluster are pruned (CRDs and namespaces are kept)")
	}
	p.Items = append(p.Items, engine.PlanItem{Action: "wait", Kind: "nodes", Name: fmt.Sprintf("%d nodes", len(env.Spec.Nodes())), Detail: "Ready, with a provider ID"})
	return p, nil
}

// addonInputs looks up what the manifests need at apply time.
func (d *Deps) addonInputs(ctx context.Context, env *engine.Env) (addons.Inputs, error) {
	in := addons.Inputs{ClusterID: env.State.ClusterID()}
	if r, ok := env.State.Resource(keyNetwork); ok {
		in.NetworkID = r.ID
	}
	var err error
	if in.Backup, err = d.backupInputs(ctx, env); err != nil {
		return in, err
	}
	if in.IngressLBIPv6, err = d.ingressLBIPv6(ctx, env); err != nil {
		return in, err
	}
	on := addons.Enabled(env.Spec)
	if !on[addons.HCloudSecret] {
		return in, nil
	}
	if in.NetworkID == 0 {
		return in, errors.New("the cluster network's ID is not in the state: run the network step first (the cloud controller needs HCLOUD_NETWORK)")
	}
	tok, err := d.Secret(ctx, "secrets.hcloudToken", env.Spec.Secrets.HCloudToken)
	if err != nil {
		return in, err
	}
	in.Token = strings.TrimSpace(tok.Reveal())
	return in, nil
}

// RenderAddons renders the add-ons for talos-config --out. The network ID
// is left out when the network does not exist yet; with redact the token
// is not looked up at all.
func RenderAddons(ctx context.Context, d *Deps, env *engine.Env, redact bool) ([]addons.Addon, error) {
	in := planInputs(env)
	if !redact {
		b, err := d.backupInputs(ctx, env)
		if err != nil {
			return nil, err
		}
		in.Backup = b
	}
	if !redact && addons.Enabled(env.Spec)[addons.HCloudSecret] {
		tok, err := d.Secret(ctx, "secrets.hcloudToken", env.Spec.Secrets.HCloudToken)
		if err != nil {
			return nil, err
		}
		in.Token = strings.TrimSpace(tok.Reveal())
	}
	return addons.Render(env.Spec, in)
}

// Apply implements engine.Step. The add-ons from upstream charts are
// Helm releases; what has no chart (the hcloud Secret, the longhorn
// Namespace, the metadata policy, talos-backup) is applied as typed
// objects, the Secret and Namespace before the releases, the rest after.
func (s *Addons) Apply(ctx context.Context, env *engine.Env, emit engine.Emit) error {
	// Every chart first, before anything is looked up or installed: one
	// refused leaves the cluster untouched. The charts do not depend on
	// the inputs, so the plan's serve to name them.
	wanted, err := wantedReleases(env.Spec, planInputs(env))
	if err != nil {
		return err
	}
	fetched, err := s.d.fetchCharts(ctx, wanted, emit)
	if err != nil {
		return err
	}
	in, err := s.d.addonInputs(ctx, env)
	if err != nil {
		return err
	}
	rendered, err := addons.Render(env.Spec, in)
	if err != nil {
		return err
	}
	rels, err := wantedReleases(env.Spec, in)
	if err != nil {
		return err
	}
	// The first step that needs the Kubernetes API: in the sandbox it may
	// still be building.
	if err := s.d.kubeReady(ctx, emit); err != nil {
		return err
	}
	c, err := s.d.Kube(ctx, env)
	if err != nil {
		return err
	}
	rc, err := s.d.Releases(ctx, env)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, s.d.nodeTimeout())
	defer cancel()
	before, after := addons.TypedObjects(rendered)
	desired := map[string]bool{}
	if err := s.applyTyped(wctx, c, before, desired, emit); err != nil {
		return err
	}
	if err := s.ensureReleases(wctx, env, c, rc, rels, fetched, emit); err != nil {
		return err
	}
	if err := s.uninstallSwitchedOff(wctx, env, rc, emit); err != nil {
		return err
	}
	if err := s.uninstallRemovedExtras(wctx, env, rc, rels, emit); err != nil {
		return err
	}
	if err := s.applyTyped(wctx, c, after, desired, emit); err != nil {
		return err
	}
	if err := s.prune(wctx, c, desired, handedOver(rels), emit); err != nil {
		return err
	}
	if err := recordAddons(env); err != nil {
		return err
	}
	if err := recordReleases(env, rels); err != nil {
		return err
	}
	if err := s.wait(wctx, c, env, rendered, emit); err != nil {
		return err
	}
	return s.waitIngressLB(wctx, env, emit)
}

// applyTyped applies typed objects by server-side apply, one resource
// per add-on ("addon/cilium") with the objects as its stages.
func (s *Addons) applyTyped(ctx context.Context, c *kube.Client, objs []addons.Object, desired map[string]bool, emit engine.Emit) error {
	for i, o := range objs {
		name := o.Label(addons.LabelAddon)
		if err := s.apply(ctx, c, o); err != nil {
			return fmt.Errorf("add-on %s: apply %s: %w", name, o.Ref(), err)
		}
		desired[o.Ref()] = true
		emit(engine.Event{Kind: engine.KindResource, Action: "apply", Resource: "addon/" + name,
			Message: fmt.Sprintf("%s applied (%d/%d typed objects, server-side, field manager %s)", o.Ref(), i+1, len(objs), kube.FieldManager)})
	}
	return nil
}

// handedOver are the add-ons whose release is handed over: their
// objects are never pruned.
func handedOver(rels []addonRelease) map[string]bool {
	out := map[string]bool{}
	for _, r := range rels {
		if !r.Managed {
			out[r.Addon] = true
		}
	}
	return out
}

// apply applies one object, retrying while the API server is not there yet
// or a CRD it needs is not served yet. An object whose CRD an operator
// registers at run time first waits for it, with its own bound and a
// message naming the operator.
func (s *Addons) apply(ctx context.Context, c *kube.Client, o addons.Object) error {
	if k, ok := addons.RegisteredByOperator(o); ok {
		if err := awaitKind(ctx, c, k, operatorCRDTimeout, s.d.poll()); err != nil {
			return err
		}
	}
	for {
		_, err := c.Apply(ctx, o)
		if err == nil || !kube.IsRetryable(err) {
			return err
		}
		if werr := sleep(ctx, s.d.poll()); werr != nil {
			return fmt.Errorf("%w (waited: %w)", err, werr)
		}
	}
}

// prune deletes typed objects labelled as ours that are no longer
// applied: the objects of add-ons switched off, objects an add-on stopped
// rendering, and those an earlier ohmytalos applied that a release does
// not adopt. Handed-over add-ons' objects are left alone. Objects a
// release adopted carry helm's managed-by label, not ours.
func (s *Addons) prune(ctx context.Context, c *kube.Client, desired, keep map[string]bool, emit engine.Emit) error {
	sel := addons.LabelManagedBy + "=" + addons.ManagedBy
	for _, k := range addons.PrunableKinds() {
		live, err := c.List(ctx, k.APIVersion, k.Kind, "", sel)
		if errors.Is(err, kube.ErrNoKind) {
			continue // an API group the cluster does not serve holds nothing of ours
		}
		if err != nil {
			return fmt.Errorf("list %s to prune: %w", k.Kind, err)
		}
		for _, o := range live {
			obj := addons.Object(o)
			if keep[obj.Label(addons.LabelAddon)] || !addons.Prunable(k.Kind, obj.Ref(), desired) {
				continue
			}
			if err := c.Delete(ctx, k.APIVersion, k.Kind, obj.Namespace(), obj.Name()); err != nil {
				return fmt.Errorf("prune %s: %w", obj.Ref(), err)
			}
			emit(engine.Event{Kind: engine.KindResource, Action: engine.ActionDelete, Resource: strings.ToLower(k.Kind) + "/" + obj.Name(),
				Message: "pruned " + obj.Ref() + ": its add-on no longer renders it"})
		}
	}
	return nil
}
