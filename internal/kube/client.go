// Package kube is the product's one way to Kubernetes: a thin layer over
// client-go. Kubeconfigs load with clientcmd (exec and auth-provider
// plugins, contexts, $KUBECONFIG lists, proxy-url); unstructured objects
// go through the dynamic client, mapped to their resources by discovery,
// and are applied server-side; drains use kubectl's drain library. Errors
// carry the operator's words (StatusError, IsRetryable).
package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// FieldManager is the server-side apply field manager of every object
// ohmytalos applies.
const FieldManager = "ohmytalos"

// ApplyPatchType is the content type of a server-side apply.
const ApplyPatchType = "application/apply-patch+yaml"

// Object is one Kubernetes object as a JSON tree.
type Object = map[string]any

// Client talks to one API server through client-go.
type Client struct {
	cfg   *rest.Config
	typed kubernetes.Interface
	dyn   dynamic.Interface

	mu sync.Mutex
	// discovery caches each apiVersion's resources by kind.
	discovery map[string]map[string]metav1.APIResource
}

// New builds a client from kubeconfig bytes (the current context).
func New(kubeconfig []byte) (*Client, error) {
	return Load(Kubeconfig{Data: kubeconfig})
}

// Load builds a client from a kubeconfig source and context.
func Load(k Kubeconfig) (*Client, error) {
	cfg, err := k.RESTConfig()
	if err != nil {
		return nil, err
	}
	return NewForConfig(cfg)
}

// NewForConfig builds a client from client-go's configuration.
func NewForConfig(cfg *rest.Config) (*Client, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		// The key's content never goes into the message (client-go's does
		// not quote it either).
		return nil, fmt.Errorf("kubeconfig credentials for %s: %w", cfg.Host, err)
	}
	typed, err := kubernetes.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client for %s: %w", cfg.Host, err)
	}
	dyn, err := dynamic.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("kubernetes client for %s: %w", cfg.Host, err)
	}
	return &Client{cfg: cfg, typed: typed, dyn: dyn}, nil
}

// Server is the API server URL the client talks to.
func (c *Client) Server() string { return strings.TrimRight(c.cfg.Host, "/") }

// Typed is client-go's typed clientset on the same connection.
func (c *Client) Typed() kubernetes.Interface { return c.typed }

// Dynamic is client-go's dynamic client on the same connection.
func (c *Client) Dynamic() dynamic.Interface { return c.dyn }

// RESTConfig is a copy of the client's configuration.
func (c *Client) RESTConfig() *rest.Config { return rest.CopyConfig(c.cfg) }

// gvPath is the API root of an apiVersion: /api/v1 or /apis/GROUP/VERSION.
func gvPath(apiVersion string) string {
	if !strings.Contains(apiVersion, "/") {
		return "/api/" + apiVersion
	}
	return "/apis/" + apiVersion
}

// resource maps a kind to its REST resource through discovery of its
// apiVersion (one GET), cached; a kind missing from the cache triggers one
// fresh discovery (a CRD applied moments ago).
func (c *Client) resource(ctx context.Context, apiVersion, kind string) (metav1.APIResource, error) {
	c.mu.Lock()
	r, ok := c.discovery[apiVersion][kind]
	c.mu.Unlock()
	if ok {
		return r, nil
	}
	path := gvPath(apiVersion)
	raw, err := c.typed.Discovery().RESTClient().Get().AbsPath(path).Do(ctx).Raw()
	if apierrors.IsNotFound(err) && apiVersion != "v1" {
		return metav1.APIResource{}, fmt.Errorf("apiVersion %s is not served by %s (its CRD may not be installed yet): %w", apiVersion, c.Server(), ErrNoKind)
	}
	if err != nil {
		// Every API server serves core v1: a 404 there is not Kubernetes.
		return metav1.APIResource{}, fmt.Errorf("API discovery: %w", wrap(http.MethodGet, path, err))
	}
	var list metav1.APIResourceList
	if err := json.Unmarshal(raw, &list); err != nil {
		return metav1.APIResource{}, fmt.Errorf("API discovery %s: decode response: %w", path, err)
	}
	kinds := map[string]metav1.APIResource{}
	for _, r := range list.APIResources {
		if !strings.Contains(r.Name, "/") {
			kinds[r.Kind] = r
		}
	}
	c.mu.Lock()
	if c.discovery == nil {
		c.discovery = map[string]map[string]metav1.APIResource{}
	}
	c.discovery[apiVersion] = kinds
	c.mu.Unlock()
	r, ok = kinds[kind]
	if !ok {
		return metav1.APIResource{}, fmt.Errorf("kind %s is not served in %s (its CRD may not be installed yet): %w", kind, apiVersion, ErrNoKind)
	}
	return r, nil
}

// Served reports whether the API server serves kind in apiVersion: false,
// nil while it does not (a CRD not registered yet), an error when the
// server cannot say.
func (c *Client) Served(ctx context.Context, apiVersion, kind string) (bool, error) {
	_, err := c.resource(ctx, apiVersion, kind)
	if errors.Is(err, ErrNoKind) {
		return false, nil
	}
	return err == nil, err
}

// target is one object's (or collection's) dynamic client and REST path.
type target struct {
	ri   dynamic.ResourceInterface
	path string // for the operator's messages: /apis/apps/v1/namespaces/kube-system/daemonsets/cilium
}

// Mapping is the RESTMapping of a kind, from discovery.
func (c *Client) Mapping(ctx context.Context, apiVersion, kind string) (*meta.RESTMapping, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return nil, fmt.Errorf("apiVersion %q: %w", apiVersion, err)
	}
	r, err := c.resource(ctx, apiVersion, kind)
	if err != nil {
		return nil, err
	}
	scope := meta.RESTScopeRoot
	if r.Namespaced {
		scope = meta.RESTScopeNamespace
	}
	return &meta.RESTMapping{Resource: gv.WithResource(r.Name), GroupVersionKind: gv.WithKind(kind), Scope: scope}, nil
}

// target resolves an object (name != "") or a collection.
func (c *Client) target(ctx context.Context, apiVersion, kind, namespace, name string) (target, error) {
	m, err := c.Mapping(ctx, apiVersion, kind)
	if err != nil {
		return target{}, err
	}
	p := gvPath(apiVersion)
	var ri dynamic.ResourceInterface = c.dyn.Resource(m.Resource)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		if namespace == "" && name != "" {
			return target{}, fmt.Errorf("%s %s is namespaced: the object needs metadata.namespace", kind, name)
		}
		if namespace != "" {
			ri = c.dyn.Resource(m.Resource).Namespace(namespace)
			p += "/namespaces/" + url.PathEscape(namespace)
		}
	}
	p += "/" + m.Resource.Resource
	if name != "" {
		p += "/" + url.PathEscape(name)
	}
	return target{ri: ri, path: p}, nil
}

func objectMeta(obj Object) (apiVersion, kind, namespace, name string) {
	u := unstructured.Unstructured{Object: obj}
	return u.GetAPIVersion(), u.GetKind(), u.GetNamespace(), u.GetName()
}

// Apply creates or updates obj by server-side apply, as field manager
// ohmytalos, forcing ownership of conflicting fields. It returns the
// object as stored.
func (c *Client) Apply(ctx context.Context, obj Object) (Object, error) {
	apiVersion, kind, ns, name := objectMeta(obj)
	if apiVersion == "" || kind == "" || name == "" {
		return nil, errors.New("apply: object lacks apiVersion, kind or metadata.name")
	}
	t, err := c.target(ctx, apiVersion, kind, ns, name)
	if err != nil {
		return nil, err
	}
	out, err := t.ri.Apply(ctx, name, &unstructured.Unstructured{Object: obj}, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	if err != nil {
		return nil, wrap(http.MethodPatch, t.path, err)
	}
	return out.Object, nil
}

// Get reads one object.
func (c *Client) Get(ctx context.Context, apiVersion, kind, namespace, name string) (Object, error) {
	t, err := c.target(ctx, apiVersion, kind, namespace, name)
	if err != nil {
		return nil, err
	}
	out, err := t.ri.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, wrap(http.MethodGet, t.path, err)
	}
	return out.Object, nil
}

// List returns every object of a kind in namespace (all namespaces when
// empty) matching the label selector, following pagination.
func (c *Client) List(ctx context.Context, apiVersion, kind, namespace, selector string) ([]Object, error) {
	t, err := c.target(ctx, apiVersion, kind, namespace, "")
	if err != nil {
		return nil, err
	}
	var out []Object
	opts := metav1.ListOptions{LabelSelector: selector, Limit: 500}
	for {
		page, err := t.ri.List(ctx, opts)
		if err != nil {
			return nil, wrap(http.MethodGet, t.path, err)
		}
		for _, it := range page.Items {
			// List items may omit apiVersion and kind; put them back.
			it.Object["apiVersion"], it.Object["kind"] = apiVersion, kind
			out = append(out, it.Object)
		}
		if page.GetContinue() == "" {
			return out, nil
		}
		opts.Continue = page.GetContinue()
	}
}

// Delete removes one object (background propagation); an object already
// gone counts as deleted.
func (c *Client) Delete(ctx context.Context, apiVersion, kind, namespace, name string) error {
	t, err := c.target(ctx, apiVersion, kind, namespace, name)
	if err != nil {
		return err
	}
	bg := metav1.DeletePropagationBackground
	err = t.ri.Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &bg})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return wrap(http.MethodDelete, t.path, err)
}
