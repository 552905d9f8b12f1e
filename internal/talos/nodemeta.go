package talos

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/siderolabs/talos/pkg/machinery/constants"
	"github.com/siderolabs/talos/pkg/machinery/labels"
)

// Longhorn and Kubernetes label/annotation keys set on worker pools
// (docs/field-notes.md, "Longhorn prepared through node labels and
// annotations"). Longhorn reads them when it first sees a node, with its
// "Create Default Disk on Labeled Nodes" setting.
const (
	// LabelLonghornCreateDefaultDisk makes Longhorn create the disks listed
	// in AnnotationLonghornDefaultDisks ("config") instead of its default one.
	LabelLonghornCreateDefaultDisk = "node.longhorn.io/create-default-disk"
	// AnnotationLonghornDefaultDisks is a JSON list of Longhorn disks.
	AnnotationLonghornDefaultDisks = "node.longhorn.io/default-disks-config"
	// AnnotationLonghornDefaultNodeTags is a JSON list of Longhorn node tags.
	AnnotationLonghornDefaultNodeTags = "node.longhorn.io/default-node-tags"
	// LabelRole is set to "storage" on storage pools.
	LabelRole = "node.kubernetes.io/role"
	// LabelExcludeFromExternalLB keeps the hcloud CCM from adding a node to
	// load balancer services.
	LabelExcludeFromExternalLB = "node.kubernetes.io/exclude-from-external-load-balancers"
)

// longhornDisk is one entry of Longhorn's default-disks-config annotation.
type longhornDisk struct {
	Name            string   `json:"name"`
	Path            string   `json:"path"`
	AllowScheduling bool     `json:"allowScheduling"`
	Tags            []string `json:"tags"`
}

// nodeMeta is the labels, annotations and taints of one group's nodes.
type nodeMeta struct {
	labels      map[string]string
	annotations map[string]string
	taints      []taint
}

// buildNodeMeta computes the node labels, annotations and taints of g.
// Control planes get only the pool's own labels and taints: Longhorn does not
// run there. Workers get the Longhorn defaults; the pool's labels win over
// them, so every default stays overridable.
func buildNodeMeta(g NodeGroup) (nodeMeta, error) {
	m := nodeMeta{
		labels:      map[string]string{},
		annotations: map[string]string{},
	}

	if g.Role == RoleWorker {
		m.labels[LabelLonghornCreateDefaultDisk] = "config"

		disks := []longhornDisk{{Name: "system", Path: LonghornSystemDiskPath, AllowScheduling: true, Tags: []string{"local"}}}
		// The volume disk exists only when the Hetzner volume is mounted,
		// i.e. when the pool has one; storage pools are expected to.
		if g.VolumeSizeGB > 0 {
			disks = append(disks, longhornDisk{Name: "volume", Path: LonghornVolumeMount, AllowScheduling: true, Tags: []string{"volume"}})
		}

		nodeTags := []string{"worker"}

		if g.Storage {
			nodeTags = []string{"storage"}
			m.labels[LabelRole] = "storage"
		}

		// A pool that is no public load balancer target (storage pools
		// included) carries the exclusion label: the hcloud CCM adds every
		// node without it to every load balancer Service it manages (the
		// service controller of kubernetes/cloud-provider, which the CCM
		// runs, drops nodes carrying v1.LabelNodeExcludeBalancers).
		if !g.LoadBalancer {
			m.labels[LabelExcludeFromExternalLB] = "true"
		}

		disksJSON, err := json.Marshal(disks)
		if err != nil {
			return nodeMeta{}, fmt.Errorf("encode longhorn disks annotation: %w", err)
		}

		tagsJSON, err := json.Marshal(nodeTags)
		if err != nil {
			return nodeMeta{}, fmt.Errorf("encode longhorn node tags annotation: %w", err)
		}

		m.annotations[AnnotationLonghornDefaultDisks] = string(disksJSON)
		m.annotations[AnnotationLonghornDefaultNodeTags] = string(tagsJSON)
	}

	maps.Copy(m.labels, g.Labels)

	taints, err := parseTaints(g.Taints)
	if err != nil {
		return nodeMeta{}, fmt.Errorf("pool %q: %w", g.Pool, err)
	}

	m.taints = taints

	return m, nil
}

// taint is one parsed "key=value:Effect".
type taint struct {
	key, value, effect string
}

// parseTaints parses "key=value:Effect" and "key:Effect", checking keys,
// values and effects with the machinery's own Kubernetes rules
// (labels.ValidateQualifiedName, labels.ValidateLabelValue,
// constants.ValidEffects), in the given order.
func parseTaints(in []string) ([]taint, error) {
	var (
		out  []taint
		errs []error
		seen = map[string]bool{}
	)

	for _, s := range in {
		keyValue, effect, ok := strings.Cut(s, ":")
		if !ok || !slices.Contains(constants.ValidEffects, effect) {
			errs = append(errs, fmt.Errorf("taint %q: the effect must be one of %s, e.g. key=value:NoSchedule", s, strings.Join(constants.ValidEffects, ", ")))

			continue
		}

		key, value, _ := strings.Cut(keyValue, "=")
		if err := labels.ValidateQualifiedName(key); err != nil {
			errs = append(errs, fmt.Errorf("taint %q: invalid key: %w", s, err))

			continue
		}

		if err := labels.ValidateLabelValue(value); err != nil {
			errs = append(errs, fmt.Errorf("taint %q: invalid value: %w", s, err))

			continue
		}

		if seen[key] {
			errs = append(errs, fmt.Errorf("taint key %q is given twice: keep one", key))

			continue
		}

		seen[key] = true

		out = append(out, taint{key: key, value: value, effect: effect})
	}

	return out, errors.Join(errs...)
}

// nodeTaintsMap is Talos' machine.nodeTaints form: key -> "value:Effect",
// or "Effect" without a value.
func nodeTaintsMap(taints []taint) map[string]string {
	if len(taints) == 0 {
		return nil
	}

	out := make(map[string]string, len(taints))

	for _, t := range taints {
		if t.value == "" {
			out[t.key] = t.effect
		} else {
			out[t.key] = t.value + ":" + t.effect
		}
	}

	return out
}

// registerWithTaints is the KubeletConfiguration registerWithTaints list
// (core/v1 Taint objects) for machine.kubelet.extraConfig.
func registerWithTaints(taints []taint) []any {
	out := make([]any, 0, len(taints))

	for _, t := range taints {
		m := map[string]any{"key": t.key, "effect": t.effect}
		if t.value != "" {
			m["value"] = t.value
		}

		out = append(out, m)
	}

	return out
}
