package steps

import (
	"context"
	"errors"
	"fmt"

	"github.com/ohmytalos/ohmytalos/internal/addons"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/kube"
)

// The Cilium clusterwide policies the add-ons apply (the metadata policy)
// are a security control, not a convenience: one deleted from the cluster
// is drift. Plan lists each against the cluster, and an apply whose
// addons step is done with the same spec runs the step again to restore
// it (Addons.Drift), as apply --only addons always did.

// clusterPolicy is one rendered clusterwide policy and whether the
// cluster holds it.
type clusterPolicy struct {
	obj addons.Object
	// presence: "present", "missing" (or its kind not served), "" when
	// there was no cluster to ask or it did not answer.
	presence string
	why      string
}

// renderedClusterPolicies are the CiliumClusterwideNetworkPolicies the
// add-ons of env's spec apply (rendered with the plan's inputs: the
// policies carry no secret).
func renderedClusterPolicies(env *engine.Env) ([]addons.Object, error) {
	rendered, err := addons.Render(env.Spec, planInputs(env))
	if err != nil {
		return nil, err
	}
	_, after := addons.TypedObjects(rendered)
	var out []addons.Object
	for _, o := range after {
		if o.APIVersion() == addons.CiliumPolicyAPIVersion && o.Kind() == addons.CiliumClusterwidePolicyKind {
			out = append(out, o)
		}
	}
	return out, nil
}

// lookClusterPolicies reads each rendered clusterwide policy from the
// cluster within planClusterTimeout when ask is set. Without ask, with no
// kubeconfig stored, or with a cluster that does not answer, the presence
// stays "".
func (d *Deps) lookClusterPolicies(ctx context.Context, env *engine.Env, ask bool) ([]clusterPolicy, error) {
	objs, err := renderedClusterPolicies(env)
	if err != nil || len(objs) == 0 {
		return nil, err
	}
	out := make([]clusterPolicy, len(objs))
	for i, o := range objs {
		out[i].obj = o
	}
	if d == nil || !ask {
		return out, nil
	}
	if _, err := env.State.Secret(secretKubeconfig); err != nil {
		return out, nil
	}
	c, err := d.Kube(ctx, env)
	if err != nil {
		return out, nil
	}
	lctx, cancel := context.WithTimeout(ctx, planClusterTimeout)
	defer cancel()
	for i, o := range objs {
		_, err := c.Get(lctx, o.APIVersion(), o.Kind(), "", o.Name())
		switch {
		case err == nil:
			out[i].presence = "present"
		case errors.Is(err, kube.ErrNotFound):
			out[i].presence, out[i].why = "missing", "missing from the cluster"
		case errors.Is(err, kube.ErrNoKind):
			out[i].presence, out[i].why = "missing", "missing from the cluster: its kind is not served (the cilium-operator registers it when it runs)"
		default:
			return out, nil // the cluster did not answer: plan and drift cannot tell
		}
	}
	return out, nil
}

// clusterPolicyPlanItem is a clusterwide policy's plan line: reuse when the
// cluster holds it, create when it is missing (or was never applied).
func clusterPolicyPlanItem(p clusterPolicy, everApplied bool) engine.PlanItem {
	item := engine.PlanItem{Kind: "policy", Name: p.obj.Name(), Detail: addons.CiliumClusterwidePolicyKind}
	if p.obj.Name() == addons.MetadataPolicyName {
		item.Detail += ": denies pod egress to the metadata service " + addons.MetadataCIDR
	}
	switch {
	case p.presence == "present":
		item.Action = engine.ActionReuse
		item.Detail += " (in the cluster)"
	case p.presence == "missing":
		item.Action = engine.ActionCreate
		item.Detail += " (" + p.why + "): apply restores it"
	case everApplied:
		item.Action = engine.ActionReuse
		item.Detail += " (from the state's record: the cluster did not answer)"
	default:
		item.Action = engine.ActionCreate
	}
	return item
}

// Drift implements engine.Drifter: the CSI driver of a cluster made
// before cluster IDs labels its volumes with the ID from now on, and a
// clusterwide policy of the add-ons missing from the cluster (the
// metadata policy) is applied again. A cluster that does not answer is
// no reason.
func (s *Addons) Drift(ctx context.Context, env *engine.Env) string {
	if why := idDrift(env); why != "" {
		return why
	}
	if s.d == nil {
		return ""
	}
	ps, err := s.d.lookClusterPolicies(ctx, env, true)
	if err != nil {
		return ""
	}
	for _, p := range ps {
		if p.presence == "missing" {
			return fmt.Sprintf("the %s %s is %s: it is applied again", addons.CiliumClusterwidePolicyKind, p.obj.Name(), p.why)
		}
	}
	return ""
}
