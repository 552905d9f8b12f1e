package steps

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/addons"
	"github.com/ohmytalos/ohmytalos/internal/doctor"
	"github.com/ohmytalos/ohmytalos/internal/engine"
)

// checkMetadataPolicyRestored deletes the metadata policy from the
// applied seed cluster (issue 30, Medium 4): the doctor fails, plan lists
// the policy as missing (not reuse), and a plain apply, its addons step
// done with the same spec, runs the step again and restores it; then
// plan reuses it and the doctor passes again.
func checkMetadataPolicyRestored(t *testing.T, c *doctorCluster) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kc, err := c.deps.Kube(ctx, c.env)
	if err != nil {
		t.Fatal(err)
	}
	if err := kc.Delete(ctx, addons.CiliumPolicyAPIVersion, addons.CiliumClusterwidePolicyKind, "", addons.MetadataPolicyName); err != nil {
		t.Fatalf("delete the metadata policy: %v", err)
	}
	if r := c.doctorResults(t, "metadata-policy")["metadata-policy"]; r.Status != doctor.StatusFail {
		t.Errorf("metadata-policy without the policy = %s, want fail: %s", r.Status, describeResult(r))
	}
	if it := c.policyPlan(t); it.Action != engine.ActionCreate || !strings.Contains(it.Detail, "missing from the cluster") {
		t.Errorf("plan with the policy deleted: %+v, want create, missing from the cluster", it)
	}

	var reran bool
	opts := engine.Options{Redact: c.deps.Redact}
	actx, acancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer acancel()
	err = c.eng.Run(actx, c.env, opts, func(ev engine.Event) {
		if ev.Step == StepAddons && ev.Kind == engine.KindWarning && strings.Contains(ev.Message, "runs again: the CiliumClusterwideNetworkPolicy "+addons.MetadataPolicyName+" is missing") {
			reran = true
		}
		if ev.Kind == engine.KindFailed {
			t.Logf("[%s] %s %s: %s", ev.Step, ev.Kind, ev.Resource, ev.Message)
		}
	})
	if err != nil {
		t.Fatalf("apply with the policy deleted: %v", err)
	}
	if !reran {
		t.Error("apply did not say the addons step runs again for the missing policy")
	}
	if _, err := kc.Get(ctx, addons.CiliumPolicyAPIVersion, addons.CiliumClusterwidePolicyKind, "", addons.MetadataPolicyName); err != nil {
		t.Fatalf("the metadata policy after apply: %v, want it restored", err)
	}
	if it := c.policyPlan(t); it.Action != engine.ActionReuse || !strings.Contains(it.Detail, "in the cluster") {
		t.Errorf("plan after the policy was restored: %+v, want reuse, in the cluster", it)
	}
	if r := c.doctorResults(t, "metadata-policy")["metadata-policy"]; r.Status != doctor.StatusPass {
		t.Errorf("metadata-policy after apply = %s, want pass: %s", r.Status, describeResult(r))
	}
}

// policyPlan is the metadata policy's line in the addons step's plan.
func (c *doctorCluster) policyPlan(t *testing.T) engine.PlanItem {
	t.Helper()
	plans, err := c.eng.Plan(context.Background(), c.env)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range plans {
		for _, it := range p.Items {
			if p.Step == StepAddons && it.Kind == "policy" && it.Name == addons.MetadataPolicyName {
				return it
			}
		}
	}
	t.Fatalf("no policy %s in the addons plan: %+v", addons.MetadataPolicyName, plans)
	return engine.PlanItem{}
}
