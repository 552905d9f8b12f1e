package releases

import (
	"context"
	"encoding/json"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// Helm's ownership metadata (pkg/action/validate.go: appManagedByLabel,
// helmReleaseNameAnnotation, helmReleaseNamespaceAnnotation).
const (
	managedByLabel          = "app.kubernetes.io/managed-by"
	managedByHelm           = "Helm"
	releaseNameAnnotation   = "meta.helm.sh/release-name"
	releaseNamespaceAnnotat = "meta.helm.sh/release-namespace"
)

// patcher merge-patches live objects' metadata.
type patcher struct {
	dyn    dynamic.Interface
	mapper meta.RESTMapper
}

func (c *Client) patcher(namespace string) (*patcher, error) {
	_, g, err := c.action(namespace)
	if err != nil {
		return nil, err
	}

	rc, err := g.ToRESTConfig()
	if err != nil {
		return nil, err
	}

	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client: %w", err)
	}

	return &patcher{dyn: dyn, mapper: g.mapper}, nil
}

// patchMeta merge-patches obj's labels and annotations (a nil value
// removes the key). A missing object is skipped: found is false.
func (p *patcher) patchMeta(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string, labels, annotations map[string]any) (found bool, err error) {
	m, err := p.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return false, fmt.Errorf("%s %s: %w", gvk.Kind, name, err)
	}

	md := map[string]any{}
	if labels != nil {
		md["labels"] = labels
	}

	if annotations != nil {
		md["annotations"] = annotations
	}

	body, err := json.Marshal(map[string]any{"metadata": md})
	if err != nil {
		return false, err
	}

	var ri dynamic.ResourceInterface = p.dyn.Resource(m.Resource)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		ri = p.dyn.Resource(m.Resource).Namespace(namespace)
	}

	_, err = ri.Patch(ctx, name, types.MergePatchType, body, metav1.PatchOptions{FieldManager: fieldManager})
	if apierrors.IsNotFound(err) {
		return false, nil
	}

	if err != nil {
		return false, fmt.Errorf("label %s %s/%s for helm: %w", gvk.Kind, namespace, name, err)
	}

	return true, nil
}

// fieldManager names ohmytalos's metadata patches.
const fieldManager = "ohmytalos"

// objectNamespace is where a rendered object lives: its own namespace,
// or the release's when the chart leaves it out (helm's kube.Client
// builds with DefaultNamespace, pkg/kube/client.go Build).
func objectNamespace(o *unstructured.Unstructured, releaseNamespace string) string {
	if ns := o.GetNamespace(); ns != "" {
		return ns
	}

	return releaseNamespace
}
