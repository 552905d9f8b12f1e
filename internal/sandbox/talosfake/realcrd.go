package talosfake

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// crdInstallTimeout bounds one CRD installation on the real API server.
const crdInstallTimeout = time.Minute

// installCRD creates a CustomResourceDefinition on the real API server as
// Talos' manifest controller applies its own (with the cluster admin's
// credentials, once kube-apiserver answers); one that exists is left as it
// is. It runs once per definition, in the background; a failure is logged
// and retried at the next sync.
func (rk *realKube) installCRD(crd map[string]any) {
	name := fmt.Sprint(crd["metadata"].(map[string]any)["name"])

	rk.mu.Lock()
	if rk.crds[name] {
		rk.mu.Unlock()

		return
	}

	rk.crds[name] = true
	rk.mu.Unlock()

	go func() {
		if err := rk.createCRD(crd); err != nil {
			rk.cluster.opts.Logger.Error("talos CRD not installed", "crd", name, "err", err)

			rk.mu.Lock()
			delete(rk.crds, name)
			rk.mu.Unlock()
		}
	}()
}

func (rk *realKube) createCRD(crd map[string]any) error {
	<-rk.ready

	rk.mu.Lock()
	cp := rk.cp
	rk.mu.Unlock()

	if cp == nil {
		return nil
	}

	cfg, err := cp.RESTConfig("admin", "system:masters")
	if err != nil {
		return err
	}

	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}

	ctx, cancel := context.WithTimeout(rk.cluster.ctx, crdInstallTimeout)
	defer cancel()

	obj := &unstructured.Unstructured{Object: crd}

	_, err = dc.Resource(crdResource).Create(ctx, obj.DeepCopy(), metav1.CreateOptions{FieldManager: "talos"})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create %s: %w", obj.GetName(), err)
	}

	return nil
}
