package releases

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Adopt prepares objects an earlier ohmytalos applied as typed objects
// for the release name in namespace to take over: each existing one gets
// helm's ownership metadata, the label app.kubernetes.io/managed-by=Helm
// and the annotations meta.helm.sh/release-name and
// meta.helm.sh/release-namespace, with a JSON merge patch. Nothing is
// deleted or recreated (a DaemonSet keeps its UID and its pods), and the
// install that follows adopts them: helm's install refuses an existing
// object unless it carries exactly this metadata
// (helm.sh/helm/v4 pkg/action/validate.go existingResourceConflict ->
// checkOwnership), and then updates it in place instead of creating it
// (pkg/action/install.go performInstall, toBeAdopted). objs are the
// release's rendered objects (charts.Render); those absent from the
// cluster are skipped.
func (c *Client) Adopt(ctx context.Context, name, namespace string, objs []*unstructured.Unstructured) error {
	p, err := c.patcher(namespace)
	if err != nil {
		return err
	}

	labels := map[string]any{managedByLabel: managedByHelm}
	annotations := map[string]any{releaseNameAnnotation: name, releaseNamespaceAnnotat: namespace}

	for _, o := range objs {
		if _, err := p.patchMeta(ctx, o.GroupVersionKind(), objectNamespace(o, namespace), o.GetName(), labels, annotations); err != nil {
			return err
		}
	}

	return nil
}
