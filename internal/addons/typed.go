package addons

import "github.com/ohmytalos/ohmytalos/internal/spec"

// SpecAddon is the spec's settings of a chart add-on by its spec key
// ("hcloudCCM"); false for a key the spec has no section for yet.
func SpecAddon(sp *spec.Spec, key string) (spec.Addon, bool) { return specAddon(sp, key) }

// TypedObjects are the rendered objects that stay typed objects applied
// with server-side apply because no upstream chart renders them: the
// kube-system/hcloud Secret (it holds the token, which never goes into
// release values), the longhorn-system Namespace with its PodSecurity
// labels (the chart does not create its namespace), the Cilium metadata
// policy (ohmytalos's own, not the chart's) and talos-backup (no upstream
// chart). Before are the objects the releases need (Secret, Namespace);
// after are those that need a release running (the policy's kind is
// registered by the cilium-operator) or nothing at all (talos-backup).
func TypedObjects(rendered []Addon) (before, after []Object) {
	for _, a := range rendered {
		_, fromChart := ChartOf(a.Name)
		for _, o := range a.Objects {
			kind := o.Kind()
			switch {
			case !fromChart && (kind == "Secret" && a.Name == HCloudSecret):
				before = append(before, o)
			case !fromChart:
				after = append(after, o)
			case kind == "Namespace":
				before = append(before, o)
			case kind == CiliumClusterwidePolicyKind:
				after = append(after, o)
			}
		}
	}
	return before, after
}
