package kubereal

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// The hcloud cloud controller's image and the taint it lifts
// (k8s.io/cloud-provider api well_known_taints.go).
const (
	ccmImage           = "hetznercloud/hcloud-cloud-controller-manager"
	taintUninitialized = "node.cloudprovider.kubernetes.io/uninitialized"
	cloudSync          = time.Second
)

// CloudController is the Hetzner cloud controller manager's node
// controller, simulated against the real API server: while a Ready pod of
// the hcloud CCM image runs, it looks up each uninitialized node's server
// by name through hcloud-go with that pod's HCLOUD_TOKEN, then sets the
// provider ID, addresses, instance type and location labels, and lifts the
// uninitialized taint (hetznercloud/hcloud-cloud-controller-manager
// hcloud/instances.go InstanceMetadata; k8s.io/cloud-provider
// controllers/node/node_controller.go). Routes, load balancers and the
// CSI driver are not simulated here yet. Its node lifecycle controller
// deletes the nodes whose server is gone (cloudlifecycle.go).
type CloudController struct {
	admin    *kubernetes.Clientset
	endpoint string
	poll     *poller
}

// StartCloudController runs the simulated CCM node controller, calling
// the Hetzner API at endpoint, until ctx ends or Stop.
func (c *ControlPlane) StartCloudController(ctx context.Context, endpoint string) (*CloudController, error) {
	admin, err := c.Client("system:admin", "system:masters")
	if err != nil {
		return nil, err
	}

	cc := &CloudController{admin: admin, endpoint: endpoint}
	cc.poll = startPoller(ctx, c.cfg.Timing.cloudSync(), cc.sync)

	return cc, nil
}

// Stop ends the controller.
func (cc *CloudController) Stop() { cc.poll.stop() }

// sync runs the node and node lifecycle controllers once over every
// node, while a CCM pod runs.
func (cc *CloudController) sync(ctx context.Context) bool {
	if token := cc.token(ctx); token != "" {
		cc.eachNode(ctx, token, cc.initNode)
		cc.eachNode(ctx, token, cc.deleteIfGone)
	}

	return true
}

// token is HCLOUD_TOKEN of a Ready CCM pod (a value or a Secret key), ""
// while none runs.
func (cc *CloudController) token(ctx context.Context) string {
	pods, err := cc.admin.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return ""
	}

	for i := range pods.Items {
		p := &pods.Items[i]
		if !podReady(p) {
			continue
		}

		for _, c := range p.Spec.Containers {
			if !strings.Contains(c.Image, ccmImage) {
				continue
			}

			for _, e := range c.Env {
				if e.Name == "HCLOUD_TOKEN" {
					return cc.envValue(ctx, p.Namespace, e)
				}
			}
		}
	}

	return ""
}

func (cc *CloudController) envValue(ctx context.Context, ns string, e corev1.EnvVar) string {
	if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
		return e.Value
	}

	ref := e.ValueFrom.SecretKeyRef

	s, err := cc.admin.CoreV1().Secrets(ns).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return ""
	}

	return strings.TrimSpace(string(s.Data[ref.Key]))
}

// eachNode calls act on every node, with the CCM's hcloud client made
// with token.
func (cc *CloudController) eachNode(ctx context.Context, token string, act func(context.Context, *hcloud.Client, *corev1.Node)) {
	nodes, err := cc.admin.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}

	client := hcloud.NewClient(hcloud.WithToken(token), hcloud.WithEndpoint(cc.endpoint),
		hcloud.WithApplication("hcloud-cloud-controller-manager", "sandbox"), hcloud.WithRetryOpts(hcloud.RetryOpts{MaxRetries: 0}))

	for i := range nodes.Items {
		act(ctx, client, &nodes.Items[i])
	}
}

// initNode is the CCM's node controller on one node: an uninitialized
// node whose server exists gets the server's metadata and addresses.
func (cc *CloudController) initNode(ctx context.Context, client *hcloud.Client, n *corev1.Node) {
	if !slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == taintUninitialized }) {
		return
	}

	srv, _, err := client.Server.GetByName(ctx, n.Name)
	if err != nil || srv == nil {
		return
	}

	setMetadata(n, srv)
	_, _ = cc.admin.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}) //nolint:errcheck // retried next sync

	if n.Status.Addresses = nodeAddresses(n, srv); len(n.Status.Addresses) > 0 {
		_, _ = cc.admin.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}) //nolint:errcheck // retried next sync
	}
}

// setMetadata is what the CCM's node controller sets from the instance
// metadata: provider ID, instance type and location labels, no taint.
func setMetadata(n *corev1.Node, srv *hcloud.Server) {
	n.Spec.ProviderID = "hcloud://" + strconv.FormatInt(srv.ID, 10)
	n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == taintUninitialized })

	if n.Labels == nil {
		n.Labels = map[string]string{}
	}

	if srv.ServerType != nil {
		n.Labels["node.kubernetes.io/instance-type"] = srv.ServerType.Name
	}

	if srv.Location != nil {
		n.Labels["topology.kubernetes.io/region"] = srv.Location.Name
		n.Labels["topology.kubernetes.io/zone"] = srv.Location.Name
	}

	n.Labels["instance.hetzner.cloud/provided-by"] = "cloud"
}

// nodeAddresses keeps the kubelet's InternalIP and adds the server's
// public IPv4 and name, as the CCM reports them.
func nodeAddresses(n *corev1.Node, srv *hcloud.Server) []corev1.NodeAddress {
	var out []corev1.NodeAddress

	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			out = append(out, a)
		}
	}

	if ip := srv.PublicNet.IPv4.IP; ip != nil && !srv.PublicNet.IPv4.IsUnspecified() {
		out = append(out, corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: ip.String()})
	}

	return append(out, corev1.NodeAddress{Type: corev1.NodeHostName, Address: srv.Name})
}
