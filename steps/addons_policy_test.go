package steps

import (
	"strings"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/addons"
	"github.com/ohmytalos/ohmytalos/internal/engine"
)

// TestClusterPolicyPlanItem: the metadata policy's plan line is reuse
// when the cluster holds it, create naming why when it does not, and,
// when the cluster did not answer, the state's record decides.
func TestClusterPolicyPlanItem(t *testing.T) {
	obj := addons.Object{"apiVersion": addons.CiliumPolicyAPIVersion, "kind": addons.CiliumClusterwidePolicyKind,
		"metadata": map[string]any{"name": addons.MetadataPolicyName}}
	for _, c := range []struct {
		p       clusterPolicy
		applied bool
		action  engine.Action
		detail  string
	}{
		{clusterPolicy{obj: obj, presence: "present"}, true, engine.ActionReuse, "(in the cluster)"},
		{clusterPolicy{obj: obj, presence: "missing", why: "missing from the cluster"}, true, engine.ActionCreate, "(missing from the cluster): apply restores it"},
		{clusterPolicy{obj: obj}, true, engine.ActionReuse, "from the state's record: the cluster did not answer"},
		{clusterPolicy{obj: obj}, false, engine.ActionCreate, "denies pod egress to the metadata service 169.254.169.254/32"},
	} {
		it := clusterPolicyPlanItem(c.p, c.applied)
		if it.Kind != "policy" || it.Name != addons.MetadataPolicyName || it.Action != c.action || !strings.Contains(it.Detail, c.detail) {
			t.Errorf("presence %q, applied %v: %+v, want %s with %q", c.p.presence, c.applied, it, c.action, c.detail)
		}
	}
}
