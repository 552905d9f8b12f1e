package kubereal

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// operatorImage is the Cilium operator's image for clusters outside AWS,
// Azure and Alibaba (quay.io/cilium/operator-generic), any registry and tag.
const operatorImage = "cilium/operator-generic"

// ciliumKinds are CRDs the cilium-operator registers at start, with their
// plural, kind and scope from cilium/cilium
// pkg/k8s/apis/cilium.io/client/crds/v2/*.yaml (a subset: the kinds the
// agent and ohmytalos use). No manifest or chart installs them: the
// operator's RegisterCRDsCell (pkg/k8s/apis/cilium.io/client/cell.go)
// creates them in its start hook unless --skip-crd-creation is set. So
// on the real API server an object of these kinds applied before the
// operator runs is refused as a kind that is not served, and this
// simulation is what makes them appear.
var ciliumKinds = []struct{ plural, kind, scope string }{
	{"ciliumclusterwidenetworkpolicies", "CiliumClusterwideNetworkPolicy", "Cluster"},
	{"ciliumnetworkpolicies", "CiliumNetworkPolicy", "Namespaced"},
	{"ciliumendpoints", "CiliumEndpoint", "Namespaced"},
	{"ciliumidentities", "CiliumIdentity", "Cluster"},
	{"ciliumnodes", "CiliumNode", "Cluster"},
}

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// CiliumOperator is the cilium-operator's CRD registration, simulated
// against the real API server: once a Ready pod of the operator image
// runs without --skip-crd-creation, it creates Cilium's CRDs.
type CiliumOperator struct {
	admin *kubernetes.Clientset
	crds  dynamic.NamespaceableResourceInterface
	poll  *poller
}

// StartCiliumOperator runs the simulated CRD registration until ctx ends
// or Stop.
func (c *ControlPlane) StartCiliumOperator(ctx context.Context) (*CiliumOperator, error) {
	admin, err := c.Client("system:admin", "system:masters")
	if err != nil {
		return nil, err
	}

	cfg, err := c.RESTConfig("system:admin", "system:masters")
	if err != nil {
		return nil, err
	}

	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}

	op := &CiliumOperator{admin: admin, crds: dyn.Resource(crdResource)}
	op.poll = startPoller(ctx, c.cfg.Timing.cloudSync(), op.sync)

	return op, nil
}

// Stop ends the simulation.
func (op *CiliumOperator) Stop() { op.poll.stop() }

// sync registers the CRDs once a Ready operator pod runs, and answers
// false once they are.
func (op *CiliumOperator) sync(ctx context.Context) bool {
	if op.operatorRuns(ctx) && op.register(ctx) {
		return false // registered: the real operator only updates them later
	}

	return true
}

// operatorRuns reports whether a Ready operator pod runs that was not told
// to skip the CRDs.
func (op *CiliumOperator) operatorRuns(ctx context.Context) bool {
	pods, err := op.admin.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return false
	}

	for i := range pods.Items {
		p := &pods.Items[i]
		if podReady(p) && runsOperator(p.Spec.Containers) {
			return true
		}
	}

	return false
}

func runsOperator(cs []corev1.Container) bool {
	for _, c := range cs {
		if !strings.Contains(c.Image, operatorImage) {
			continue
		}

		for _, a := range append(append([]string{}, c.Command...), c.Args...) {
			if a == "--skip-crd-creation" || strings.EqualFold(a, "--skip-crd-creation=true") {
				return false
			}
		}

		return true
	}

	return false
}

// register creates every CRD, leaving one that exists (the operator's
// create-or-update keeps a current one); it reports whether all exist.
func (op *CiliumOperator) register(ctx context.Context) bool {
	ok := true

	for _, k := range ciliumKinds {
		_, err := op.crds.Create(ctx, ciliumCRD(k.plural, k.kind, k.scope), metav1.CreateOptions{FieldManager: "cilium-operator-generic"})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			ok = false
		}
	}

	return ok
}

// ciliumCRD is one cilium.io/v2 CRD with a structural schema that keeps
// every field (the real ones carry Cilium's full schema; ohmytalos writes
// only valid policies, and the API server requires a structural schema).
func ciliumCRD(plural, kind, scope string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": plural + ".cilium.io"},
		"spec": map[string]any{
			"group": "cilium.io", "scope": scope,
			"names": map[string]any{"plural": plural, "kind": kind, "listKind": kind + "List", "singular": strings.ToLower(kind)},
			"versions": []any{map[string]any{"name": "v2", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
		},
	}}
}
