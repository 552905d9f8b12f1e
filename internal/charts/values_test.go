package charts

import (
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

var ours = []Value{
	{Path: "ipam.mode", Value: "kubernetes", Why: "Talos assigns pod CIDRs per node", Required: true},
	{Path: "k8sServicePort", Value: 7445, Why: "KubePrism", Required: true},
	{Path: "operator.replicas", Value: 1, Why: "one control plane node"},
	{Path: "args", Value: []string{"--a", "--b"}, Why: "flags"},
	{Path: `service.annotations.load-balancer\.hetzner\.cloud/location`, Value: "nbg1", Why: "the LB's location"},
}

func TestMergeUserWins(t *testing.T) {
	user := map[string]any{
		"ipam":     map[string]any{"mode": "cluster-pool", "extra": true},
		"operator": map[string]any{"replicas": 1}, // the same value: not an override
		"args":     []any{"--c"},
		"hubble":   map[string]any{"relay": map[string]any{"enabled": true}},
	}

	merged, over, err := Merge(ours, user)
	if err != nil {
		t.Fatal(err)
	}

	want := map[string]any{
		"ipam":           map[string]any{"mode": "cluster-pool", "extra": true},
		"k8sServicePort": float64(7445),
		"operator":       map[string]any{"replicas": float64(1)},
		"args":           []any{"--c"},
		"hubble":         map[string]any{"relay": map[string]any{"enabled": true}},
		"service":        map[string]any{"annotations": map[string]any{"load-balancer.hetzner.cloud/location": "nbg1"}},
	}
	if !reflect.DeepEqual(merged, want) {
		t.Fatalf("merged %#v\nwant %#v", merged, want)
	}

	if len(over) != 1 || over[0].Path != "ipam.mode" {
		t.Fatalf("overridden %v, want ipam.mode only", over)
	}

	// Replacing a parent with a scalar overrides what is under it.
	_, over, err = Merge(ours, map[string]any{"k8sServicePort": 7445, "ipam": "off"})
	if err != nil || len(over) != 1 || over[0].Path != "ipam.mode" {
		t.Fatalf("parent replaced: %v %v", over, err)
	}
}

func TestMergeRefusesConflictingPaths(t *testing.T) {
	_, _, err := Merge([]Value{{Path: "a", Value: 1}, {Path: "a.b", Value: 2}}, nil)
	if err == nil || !strings.Contains(err.Error(), "a.b") {
		t.Fatalf("conflicting paths: %v", err)
	}
}

func TestDocumentCommentsEachValue(t *testing.T) {
	doc, err := Document(ours)
	if err != nil {
		t.Fatal(err)
	}

	s := string(doc)
	mustContain(t, "document", s,
		"ipam:\n  # Talos assigns pod CIDRs per node (Talos on Hetzner needs it",
		"  mode: kubernetes\n",
		"# KubePrism (Talos on Hetzner needs it",
		"  # one control plane node\n  replicas: 1\n",
		"# flags\nargs:\n  - --a\n",
		"    # the LB's location\n    load-balancer.hetzner.cloud/location: nbg1\n",
	)

	var back map[string]any
	if err := yaml.Unmarshal(doc, &back); err != nil {
		t.Fatal(err)
	}

	tree, _ := Tree(ours)
	if !reflect.DeepEqual(back, tree) {
		t.Fatalf("the document reads back as %v, want %v", back, tree)
	}
}
