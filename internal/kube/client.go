// Package kube is a small Kubernetes API client over net/http, without
// client-go: a kubeconfig parser, discovery-based REST mapping, server-side
// apply, get, list by label selector and delete, with typed errors.
package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// FieldManager is the server-side apply field manager of every object
// ohmytalos applies.
const FieldManager = "ohmytalos"

// ApplyPatchType is the content type of a server-side apply.
const ApplyPatchType = "application/apply-patch+yaml"

// Object is one Kubernetes object as a JSON tree.
type Object = map[string]any

// Client talks to one API server.
type Client struct {
	server string
	token  string
	http   *http.Client

	mu        sync.Mutex
	discovery map[string]map[string]resourceInfo // apiVersion -> kind -> resource
}

// resourceInfo is a kind's REST resource.
type resourceInfo struct {
	Name       string `json:"name"`
	Kind       string `json:"kind"`
	Namespaced bool   `json:"namespaced"`
}

// New builds a client from kubeconfig bytes (the current context).
func New(kubeconfig []byte) (*Client, error) {
	ep, err := ParseKubeconfig(kubeconfig, "", "")
	if err != nil {
		return nil, err
	}
	return NewForEndpoint(ep), nil
}

// NewForEndpoint builds a client for a parsed endpoint.
func NewForEndpoint(ep Endpoint) *Client {
	tr := &http.Transport{TLSClientConfig: ep.TLS, Proxy: http.ProxyFromEnvironment, TLSHandshakeTimeout: 10 * time.Second}
	return &Client{server: ep.Server, token: ep.Token, http: &http.Client{Transport: tr, Timeout: 60 * time.Second}}
}

// Server is the API server URL the client talks to.
func (c *Client) Server() string { return c.server }

// do sends one request and decodes a 2xx JSON answer into out (when non-nil).
func (c *Client) do(ctx context.Context, method, path, contentType string, body []byte, out any) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.server+path, rd)
	if err != nil {
		return fmt.Errorf("kubernetes API %s %s: %w", method, path, err)
	}
	req.Header.Set("Accept", "application/json")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("kubernetes API %s %s: %w", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("kubernetes API %s %s: read response: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		var st struct {
			Reason  string `json:"reason"`
			Message string `json:"message"`
		}
		_ = json.Unmarshal(data, &st)
		se := &StatusError{Method: method, Path: path, Code: resp.StatusCode, Reason: st.Reason, Message: st.Message}
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
			se.RetryAfter = time.Duration(s) * time.Second
		}
		return se
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("kubernetes API %s %s: decode response: %w", method, path, err)
	}
	return nil
}

// gvPath is the API root of an apiVersion: /api/v1 or /apis/GROUP/VERSION.
func gvPath(apiVersion string) string {
	if !strings.Contains(apiVersion, "/") {
		return "/api/" + apiVersion
	}
	return "/apis/" + apiVersion
}

// resource maps a kind to its REST resource through discovery, cached per
// apiVersion; a kind missing from the cache triggers one fresh discovery
// (a CRD applied moments ago).
func (c *Client) resource(ctx context.Context, apiVersion, kind string) (resourceInfo, error) {
	c.mu.Lock()
	r, ok := c.discovery[apiVersion][kind]
	c.mu.Unlock()
	if ok {
		return r, nil
	}
	var list struct {
		Resources []resourceInfo `json:"resources"`
	}
	err := c.do(ctx, http.MethodGet, gvPath(apiVersion), "", nil, &list)
	var se *StatusError
	if errors.As(err, &se) && se.Code == http.StatusNotFound && apiVersion != "v1" {
		return resourceInfo{}, fmt.Errorf("apiVersion %s is not served by %s (its CRD may not be installed yet): %w", apiVersion, c.server, ErrNoKind)
	}
	if err != nil {
		// Every API server serves core v1: a 404 there is not Kubernetes.
		return resourceInfo{}, fmt.Errorf("API discovery: %w", err)
	}
	kinds := map[string]resourceInfo{}
	for _, r := range list.Resources {
		if !strings.Contains(r.Name, "/") {
			kinds[r.Kind] = r
		}
	}
	c.mu.Lock()
	if c.discovery == nil {
		c.discovery = map[string]map[string]resourceInfo{}
	}
	c.discovery[apiVersion] = kinds
	c.mu.Unlock()
	r, ok = kinds[kind]
	if !ok {
		return resourceInfo{}, fmt.Errorf("kind %s is not served in %s (its CRD may not be installed yet): %w", kind, apiVersion, ErrNoKind)
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

// path is the REST path of an object (name != "") or a collection.
func (c *Client) path(ctx context.Context, apiVersion, kind, namespace, name string) (string, error) {
	r, err := c.resource(ctx, apiVersion, kind)
	if err != nil {
		return "", err
	}
	p := gvPath(apiVersion)
	if r.Namespaced {
		if namespace == "" && name != "" {
			return "", fmt.Errorf("%s %s is namespaced: the object needs metadata.namespace", kind, name)
		}
		if namespace != "" {
			p += "/namespaces/" + url.PathEscape(namespace)
		}
	}
	p += "/" + r.Name
	if name != "" {
		p += "/" + url.PathEscape(name)
	}
	return p, nil
}

func objectMeta(obj Object) (apiVersion, kind, namespace, name string) {
	apiVersion, _ = obj["apiVersion"].(string)
	kind, _ = obj["kind"].(string)
	md, _ := obj["metadata"].(map[string]any)
	namespace, _ = md["namespace"].(string)
	name, _ = md["name"].(string)
	return
}

// Apply creates or updates obj by server-side apply, as field manager
// ohmytalos, forcing ownership of conflicting fields. It returns the
// object as stored.
func (c *Client) Apply(ctx context.Context, obj Object) (Object, error) {
	apiVersion, kind, ns, name := objectMeta(obj)
	if apiVersion == "" || kind == "" || name == "" {
		return nil, fmt.Errorf("apply: object lacks apiVersion, kind or metadata.name")
	}
	p, err := c.path(ctx, apiVersion, kind, ns, name)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("apply %s %s: %w", kind, name, err)
	}
	q := url.Values{"fieldManager": {FieldManager}, "force": {"true"}}
	var out Object
	if err := c.do(ctx, http.MethodPatch, p+"?"+q.Encode(), ApplyPatchType, body, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Get reads one object.
func (c *Client) Get(ctx context.Context, apiVersion, kind, namespace, name string) (Object, error) {
	p, err := c.path(ctx, apiVersion, kind, namespace, name)
	if err != nil {
		return nil, err
	}
	var out Object
	if err := c.do(ctx, http.MethodGet, p, "", nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// List returns every object of a kind in namespace (all namespaces when
// empty) matching the label selector, following pagination.
func (c *Client) List(ctx context.Context, apiVersion, kind, namespace, selector string) ([]Object, error) {
	p, err := c.path(ctx, apiVersion, kind, namespace, "")
	if err != nil {
		return nil, err
	}
	var out []Object
	cont := ""
	for {
		q := url.Values{"limit": {"500"}}
		if selector != "" {
			q.Set("labelSelector", selector)
		}
		if cont != "" {
			q.Set("continue", cont)
		}
		var page struct {
			Metadata struct {
				Continue string `json:"continue"`
			} `json:"metadata"`
			Items []Object `json:"items"`
		}
		if err := c.do(ctx, http.MethodGet, p+"?"+q.Encode(), "", nil, &page); err != nil {
			return nil, err
		}
		for _, it := range page.Items {
			// List items omit apiVersion and kind; put them back.
			it["apiVersion"], it["kind"] = apiVersion, kind
			out = append(out, it)
		}
		if page.Metadata.Continue == "" {
			return out, nil
		}
		cont = page.Metadata.Continue
	}
}

// Delete removes one object (background propagation); an object already
// gone counts as deleted.
func (c *Client) Delete(ctx context.Context, apiVersion, kind, namespace, name string) error {
	p, err := c.path(ctx, apiVersion, kind, namespace, name)
	if err != nil {
		return err
	}
	err = c.do(ctx, http.MethodDelete, p+"?propagationPolicy=Background", "", nil, nil)
	var se *StatusError
	if errors.As(err, &se) && se.Code == http.StatusNotFound {
		return nil
	}
	return err
}
