package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
)

// MergePatchType is the content type of a JSON merge patch (RFC 7386).
const MergePatchType = "application/merge-patch+json"

// Cordon marks a node unschedulable (spec.unschedulable: true, as kubectl
// cordon does with a patch). A node already gone answers ErrNotFound.
func (c *Client) Cordon(ctx context.Context, node string) error {
	return c.setUnschedulable(ctx, node, true)
}

// Uncordon marks a node schedulable again (spec.unschedulable: false).
func (c *Client) Uncordon(ctx context.Context, node string) error {
	return c.setUnschedulable(ctx, node, false)
}

func (c *Client) setUnschedulable(ctx context.Context, node string, on bool) error {
	body := []byte(fmt.Sprintf(`{"spec":{"unschedulable":%t}}`, on))
	return c.do(ctx, http.MethodPatch, "/api/v1/nodes/"+url.PathEscape(node), MergePatchType, body, nil)
}

// PodsOnNode lists the pods bound to a node in every namespace, selected
// on the server with the field selector spec.nodeName (what kubectl drain
// lists).
func (c *Client) PodsOnNode(ctx context.Context, node string) ([]Object, error) {
	q := url.Values{"fieldSelector": {"spec.nodeName=" + node}}
	var page struct {
		Items []Object `json:"items"`
	}
	if err := c.do(ctx, http.MethodGet, "/api/v1/pods?"+q.Encode(), "", nil, &page); err != nil {
		return nil, err
	}
	for _, it := range page.Items {
		it["apiVersion"], it["kind"] = "v1", "Pod"
	}
	return page.Items, nil
}

// Evict asks the API server to evict a pod through the policy/v1 Eviction
// subresource, which honours PodDisruptionBudgets: an eviction the budget
// forbids answers 429 (ErrTooManyRequests; try again later). A pod already
// gone counts as evicted.
func (c *Client) Evict(ctx context.Context, namespace, pod string) error {
	body, err := json.Marshal(Object{
		"apiVersion": "policy/v1", "kind": "Eviction",
		"metadata": Object{"name": pod, "namespace": namespace},
	})
	if err != nil {
		return fmt.Errorf("evict pod %s/%s: %w", namespace, pod, err)
	}
	p := "/api/v1/namespaces/" + url.PathEscape(namespace) + "/pods/" + url.PathEscape(pod) + "/eviction"
	err = c.do(ctx, http.MethodPost, p, "application/json", body, nil)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}

// DeleteNode deletes a Node object; a node already gone counts as deleted.
func (c *Client) DeleteNode(ctx context.Context, node string) error {
	err := c.do(ctx, http.MethodDelete, "/api/v1/nodes/"+url.PathEscape(node), "", nil, nil)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}

// DrainSkipReason says why a drain leaves a pod where it is ("" when the
// pod must be evicted): kubectl drain skips DaemonSet pods (the DaemonSet
// controller would put them back, and tolerates unschedulable nodes) and
// mirror pods (static pods the kubelet runs from files; the API cannot
// remove them), and has nothing to do for pods that already finished.
func DrainSkipReason(pod Object) string {
	if _, ok := walk(pod, "metadata", "annotations", "kubernetes.io/config.mirror").(string); ok {
		return "mirror pod"
	}
	for _, r := range list(pod, "metadata", "ownerReferences") {
		m, _ := r.(map[string]any)
		if ctl, _ := m["controller"].(bool); ctl && m["kind"] == "DaemonSet" {
			return "DaemonSet pod"
		}
	}
	switch str(pod, "status", "phase") {
	case "Succeeded", "Failed":
		return "finished"
	}
	return ""
}
