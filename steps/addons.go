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
// controller and CSI driver, Longhorn, metrics-server) by server-side apply
// once the Kubernetes API answers, prunes those switched off, and waits
// until every node is Ready with a provider ID and the add-on workloads are
// ready. Applying is idempotent: a re-run or a resumed run converges.
type Addons struct{ d *Deps }

// Name implements engine.Step.
func (s *Addons) Name() engine.StepName { return StepAddons }

// Title implements engine.Step.
func (s *Addons) Title() string { return "Add-ons: Cilium, Hetzner CCM and CSI" }

// After implements engine.Dependent.
func (s *Addons) After() []engine.StepName { return []engine.StepName{StepBootstrap} }

// Plan implements engine.Step.
func (s *Addons) Plan(ctx context.Context, env *engine.Env) (engine.Plan, error) {
	rendered, err := addons.Render(env.Spec, planInputs(env))
	if err != nil {
		return engine.Plan{}, err
	}
	var applied map[string]addonRecord
	if _, err := env.State.GetData(dataAddons, &applied); err != nil {
		return engine.Plan{}, err
	}
	p := engine.Plan{}
	for _, a := range rendered {
		detail := fmt.Sprintf("%d objects", len(a.Objects))
		if a.Version != "" {
			detail += ", " + a.Version
		}
		if a.Name == addons.Cilium {
			detail += ", " + addons.CiliumSummary(env.Spec)
		}
		p.Items = append(p.Items, addonPlanItem(a, applied[a.Name], detail))
	}
	on := addons.Enabled(env.Spec)
	for _, n := range addons.Names() {
		if !on[n] {
			p.Notes = append(p.Notes, n+" is switched off: objects it left in the cluster are pruned (CRDs and namespaces are kept)")
		}
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

// Apply implements engine.Step.
func (s *Addons) Apply(ctx context.Context, env *engine.Env, emit engine.Emit) error {
	in, err := s.d.addonInputs(ctx, env)
	if err != nil {
		return err
	}
	rendered, err := addons.Render(env.Spec, in)
	if err != nil {
		return err
	}
	c, err := s.d.Kube(ctx, env)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, s.d.nodeTimeout())
	defer cancel()
	desired := map[string]bool{}
	for _, a := range rendered {
		// One resource per add-on ("addon/cilium"): its objects are the
		// stages, so a screen shows one line per add-on, not one per object.
		for i, o := range a.Objects {
			if err := s.apply(wctx, c, o); err != nil {
				return fmt.Errorf("add-on %s: apply %s: %w", a.Name, o.Ref(), err)
			}
			desired[o.Ref()] = true
			emit(engine.Event{Kind: engine.KindResource, Action: "apply", Resource: "addon/" + a.Name,
				Message: fmt.Sprintf("%s applied (%d/%d objects, server-side, field manager %s)", o.Ref(), i+1, len(a.Objects), kube.FieldManager)})
		}
	}
	if err := s.prune(wctx, c, desired, emit); err != nil {
		return err
	}
	if err := recordAddons(env); err != nil {
		return err
	}
	return s.wait(wctx, c, env, rendered, emit)
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

// prune deletes objects labelled as ours that are no longer rendered: the
// objects of add-ons switched off, and objects an add-on stopped rendering.
func (s *Addons) prune(ctx context.Context, c *kube.Client, desired map[string]bool, emit engine.Emit) error {
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
			if !addons.Prunable(k.Kind, obj.Ref(), desired) {
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
