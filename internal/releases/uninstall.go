package releases

import (
	"context"
	"errors"
	"fmt"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/kube"
	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
	"helm.sh/helm/v4/pkg/storage/driver"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// head is what disown reads of a manifest document.
type head struct {
	Version  string `json:"apiVersion"`
	Kind     string `json:"kind"`
	Metadata *struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

// kept are the kinds an uninstall leaves in the cluster: the API a
// chart's custom resources (and the operator's) live in, and the claims
// that hold volume data. A chart's crds/ directory is never deleted by
// helm; these are the ones a chart renders from templates.
var kept = map[string]bool{
	"apiextensions.k8s.io/CustomResourceDefinition": true,
	"/PersistentVolumeClaim":                        true,
	"/PersistentVolume":                             true,
}

// Uninstall removes release name in namespace and waits for its objects
// to go, keeping CRDs and volume data: first the kept objects lose helm's
// ownership metadata, so helm's uninstall skips them as "not owned by
// this release" (helm.sh/helm/v4 pkg/action/validate.go
// verifyOwnershipBeforeDelete, pkg/action/uninstall.go deleteRelease);
// PVCs a StatefulSet made were never the release's. A release that does
// not exist is no error.
func (c *Client) Uninstall(ctx context.Context, name, namespace string) error {
	cfg, _, err := c.action(namespace)
	if err != nil {
		return err
	}

	r, err := action.NewGet(cfg).Run(name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return nil
	}

	if err != nil {
		return fmt.Errorf("read helm release %s in %s: %w", name, namespace, err)
	}

	rel, err := v1(r)
	if err != nil {
		return err
	}

	if err := c.disown(ctx, namespace, rel.Manifest); err != nil {
		return err
	}

	un := action.NewUninstall(cfg)
	un.WaitStrategy = kube.StatusWatcherStrategy
	un.Timeout = DefaultTimeout
	un.DeletionPropagation = "background"
	un.IgnoreNotFound = true

	if _, err := un.Run(name); err != nil {
		return fmt.Errorf("helm uninstall %s in %s: %w: retry, or run `helm uninstall %s -n %s`", name, namespace, err, name, namespace)
	}

	return nil
}

// disown removes helm's ownership metadata from the manifest's kept
// objects.
func (c *Client) disown(ctx context.Context, namespace, manifest string) error {
	var p *patcher

	for _, m := range releaseutil.SplitManifests(manifest) {
		var h head
		if err := yaml.Unmarshal([]byte(m), &h); err != nil || h.Metadata == nil {
			continue
		}

		gv, err := schema.ParseGroupVersion(h.Version)
		if err != nil || !kept[gv.Group+"/"+h.Kind] {
			continue
		}

		if p == nil {
			if p, err = c.patcher(namespace); err != nil {
				return err
			}
		}

		ns := h.Metadata.Namespace
		if ns == "" {
			ns = namespace
		}

		if _, err := p.patchMeta(ctx, gv.WithKind(h.Kind), ns, h.Metadata.Name,
			map[string]any{managedByLabel: nil},
			map[string]any{releaseNameAnnotation: nil, releaseNamespaceAnnotat: nil}); err != nil {
			return fmt.Errorf("keep %s %s out of the uninstall: %w", h.Kind, h.Metadata.Name, err)
		}
	}

	return nil
}
