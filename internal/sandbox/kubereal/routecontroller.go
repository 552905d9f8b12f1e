package kubereal

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/record"
)

// routeResync is how often the route controller looks at the network
// even when no node changed (the cloud-provider's default
// --route-reconciliation-period is 10s; a minute spares the sandbox's
// Hetzner rate limit).
const routeResync = time.Minute

// routeController is the route controller of k8s.io/cloud-provider
// (controllers/route/route_controller.go) with the hcloud CCM's routes
// (hetznercloud/hcloud-cloud-controller-manager hcloud/routes.go): a
// route in the Hetzner network for each node's pod CIDR through the
// server's private IP in that network, stale routes in the cluster CIDR
// removed, and the node's NetworkUnavailable condition False once its
// routes exist.
type routeController struct {
	sim      *Simulators
	recorder record.EventRecorder
	synced   string
	at       time.Time
}

// routeConfig is the CCM's route configuration: the route controller runs
// with --allocate-node-cidrs=true and --configure-cloud-routes (default
// true) and a cluster CIDR (cloud-provider app/core.go
// startRouteController), and the hcloud CCM offers routes when
// HCLOUD_NETWORK is set and HCLOUD_NETWORK_ROUTES_ENABLED is not false
// (internal/config/config.go). The hcloud chart passes both flags with
// networking.enabled (chart/templates/deployment.yaml).
func routeConfig(env podEnv) (network string, clusterCIDRs []*net.IPNet, ok bool) {
	network = env.vars[envNetwork]
	if network == "" || !env.flag("HCLOUD_NETWORK_ROUTES_ENABLED", true) {
		return "", nil, false
	}

	if v, _ := env.arg("allocate-node-cidrs"); v != "true" && !slices.Contains(env.args, "--allocate-node-cidrs") {
		return "", nil, false
	}

	if v, set := env.arg("configure-cloud-routes"); set && v == "false" {
		return "", nil, false
	}

	cidrs, _ := env.arg("cluster-cidr")
	for c := range strings.SplitSeq(cidrs, ",") {
		if _, n, err := net.ParseCIDR(strings.TrimSpace(c)); err == nil {
			clusterCIDRs = append(clusterCIDRs, n)
		}
	}

	return network, clusterCIDRs, len(clusterCIDRs) > 0
}

func (rc *routeController) reconcile(ctx context.Context) {
	env, ok := rc.sim.running(ccmImage, nil)
	if !ok || env.vars["HCLOUD_TOKEN"] == "" {
		return
	}

	network, clusterCIDRs, ok := routeConfig(env)
	if !ok {
		return
	}

	nodes, err := rc.sim.nodes.List(labels.Everything())
	if err != nil {
		return
	}

	slices.SortFunc(nodes, func(a, b *corev1.Node) int { return strings.Compare(a.Name, b.Name) })

	key := routeKey(env, nodes)
	if key == rc.synced && time.Since(rc.at) < routeResync {
		return
	}

	c := rc.sim.hcloud(env.vars["HCLOUD_TOKEN"], "hcloud-cloud-controller-manager")

	if err := rc.sync(ctx, c, network, clusterCIDRs, nodes); err != nil {
		rc.synced = ""

		return
	}

	rc.synced, rc.at = key, time.Now()
}

func routeKey(env podEnv, nodes []*corev1.Node) string {
	var b strings.Builder

	fmt.Fprint(&b, env.vars[envNetwork], env.args)

	for _, n := range nodes {
		fmt.Fprint(&b, "|", n.Name, n.Spec.ProviderID, n.Spec.PodCIDRs, n.Status.Addresses, networkCondition(n))
	}

	return b.String()
}

func networkCondition(n *corev1.Node) string {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeNetworkUnavailable {
			return string(c.Status) + c.Reason
		}
	}

	return ""
}

// sync is RouteController.reconcile. It reports an error when the
// network could not be read (the next pass retries everything); a route
// that could not be created leaves its node's NetworkUnavailable True.
func (rc *routeController) sync(ctx context.Context, c *hcloud.Client, network string, clusterCIDRs []*net.IPNet, nodes []*corev1.Node) error {
	nw, _, err := c.Network.Get(ctx, network)
	if err != nil || nw == nil {
		return fmt.Errorf("hcloud/reloadNetwork: network %s: %w", network, err)
	}

	servers, err := c.Server.All(ctx)
	if err != nil {
		return fmt.Errorf("hcloud/ListRoutes: error fetching servers: %w", err)
	}

	// ListRoutes: a route's target is the server with the gateway as its
	// private IP in the network; none makes it a blackhole.
	byIP := map[string]*hcloud.Server{}

	for _, s := range servers {
		for _, pn := range s.PrivateNet {
			if pn.Network != nil && pn.Network.ID == nw.ID {
				byIP[pn.IP.String()] = s
			}
		}
	}

	wanted := map[string]string{} // pod CIDR -> node name

	for _, n := range nodes {
		for _, cidr := range n.Spec.PodCIDRs {
			wanted[cidr] = n.Name
		}
	}

	for _, r := range nw.Routes {
		target := ""
		if s := byIP[r.Gateway.String()]; s != nil {
			target = s.Name
		}

		if inClusterCIDR(r.Destination, clusterCIDRs) && (target == "" || wanted[r.Destination.String()] != target) {
			_ = rc.deleteRoute(ctx, c, nw, r) //nolint:errcheck // the next pass retries; the controller only logs it
		}
	}

	for _, n := range nodes {
		rc.syncNode(ctx, c, nw, servers, n)
	}

	return nil
}

func inClusterCIDR(dst *net.IPNet, clusterCIDRs []*net.IPNet) bool {
	if dst == nil {
		return false
	}

	last := make(net.IP, len(dst.IP))
	for i := range last {
		last[i] = dst.IP[i] | ^dst.Mask[i]
	}

	return slices.ContainsFunc(clusterCIDRs, func(c *net.IPNet) bool { return c.Contains(dst.IP) || c.Contains(last) })
}

func (rc *routeController) deleteRoute(ctx context.Context, c *hcloud.Client, nw *hcloud.Network, r hcloud.NetworkRoute) error {
	a, _, err := c.Network.DeleteRoute(ctx, nw, hcloud.NetworkDeleteRouteOpts{Route: r})

	return waitAction(ctx, c, a, err) //nolint:wrapcheck // logged only
}

// waitAction waits for the action a call to the Hetzner API started; err
// is the call's own error, returned as it is.
func waitAction(ctx context.Context, c *hcloud.Client, a *hcloud.Action, err error) error {
	if err != nil {
		return err
	}

	return c.Action.WaitFor(ctx, a) //nolint:wrapcheck // callers say what waited
}

// syncNode creates the node's missing routes and sets its condition.
func (rc *routeController) syncNode(ctx context.Context, c *hcloud.Client, nw *hcloud.Network, servers []*hcloud.Server, n *corev1.Node) {
	if len(n.Spec.PodCIDRs) == 0 {
		return // no CIDR assigned yet
	}

	created := true

	for _, cidr := range n.Spec.PodCIDRs {
		start := time.Now()

		if err := createRoute(ctx, c, nw, servers, n, cidr); err != nil {
			created = false

			rc.recorder.Eventf(&corev1.ObjectReference{APIVersion: "v1", Kind: "Node", Name: n.Name, UID: n.UID}, corev1.EventTypeWarning, "FailedToCreateRoute",
				"Could not create route %s %s for node %s after %v: %v", n.UID, cidr, n.Name, time.Since(start).Round(time.Millisecond), err)
		}
	}

	_ = rc.setNetworkCondition(ctx, n, created) //nolint:errcheck // retried on the next pass
}

// createRoute is the hcloud CCM's CreateRoute: IPv4 only; the gateway is
// the server's private IP in the network (the server found by provider
// ID, else by name), which must be one of the node's InternalIPs; a route
// for the CIDR through another gateway is replaced.
func createRoute(ctx context.Context, c *hcloud.Client, nw *hcloud.Network, servers []*hcloud.Server, n *corev1.Node, cidr string) error {
	ip, dst, err := net.ParseCIDR(cidr)
	if err != nil {
		return fmt.Errorf("hcloud/CreateRoute: %w", err)
	}

	if ip.To4() == nil {
		return fmt.Errorf("hcloud/CreateRoute: can't create route %q via node %q: private networks do not support IPv6", dst, n.Name)
	}

	srv := routeServer(servers, n)
	if srv == nil {
		return fmt.Errorf("hcloud/CreateRoute: error resolving route target: hcloud server for node %s not found", n.Name)
	}

	pn := srv.PrivateNetFor(nw)
	if pn == nil {
		return fmt.Errorf("hcloud/CreateRoute: error resolving route target: server %s (%d): network with id %d not attached to this server", srv.Name, srv.ID, nw.ID)
	}

	if !slices.ContainsFunc(n.Status.Addresses, func(a corev1.NodeAddress) bool { return a.Type == corev1.NodeInternalIP && a.Address == pn.IP.String() }) {
		return fmt.Errorf("hcloud/CreateRoute: IP %s not part of routes target addresses", pn.IP)
	}

	for _, r := range nw.Routes {
		if r.Destination.String() != dst.String() {
			continue
		}

		if r.Gateway.Equal(pn.IP) {
			return nil
		}

		a, _, err := c.Network.DeleteRoute(ctx, nw, hcloud.NetworkDeleteRouteOpts{Route: r})
		if err := waitAction(ctx, c, a, err); err != nil {
			return fmt.Errorf("error deleting route for %q via %q: %w", dst, pn.IP, err)
		}
	}

	a, _, err := c.Network.AddRoute(ctx, nw, hcloud.NetworkAddRouteOpts{Route: hcloud.NetworkRoute{Destination: dst, Gateway: pn.IP}})
	if err := waitAction(ctx, c, a, err); err != nil {
		return fmt.Errorf("error upserting route %q via %q: error adding route: %w", dst, pn.IP, err)
	}

	return nil
}

func routeServer(servers []*hcloud.Server, n *corev1.Node) *hcloud.Server {
	id, err := strconv.ParseInt(strings.TrimPrefix(n.Spec.ProviderID, "hcloud://"), 10, 64)

	for _, s := range servers {
		if (err == nil && s.ID == id) || (n.Spec.ProviderID == "" && s.Name == n.Name) {
			return s
		}
	}

	return nil
}

// setNetworkCondition is updateNetworkingCondition: NetworkUnavailable
// False "RouteCreated" once every route of the node exists, else True
// "NoRouteCreated"; unchanged conditions are left alone. It patches the
// node's status as nodeutil.SetNodeCondition does.
func (rc *routeController) setNetworkCondition(ctx context.Context, n *corev1.Node, created bool) error {
	cond := corev1.NodeCondition{Type: corev1.NodeNetworkUnavailable, Status: corev1.ConditionTrue, Reason: "NoRouteCreated", Message: "RouteController failed to create a route"}
	if created {
		cond = corev1.NodeCondition{Type: corev1.NodeNetworkUnavailable, Status: corev1.ConditionFalse, Reason: "RouteCreated", Message: "RouteController created a route"}
	}

	for _, c := range n.Status.Conditions {
		if c.Type == cond.Type && c.Status == cond.Status && c.Reason == cond.Reason {
			return nil
		}
	}

	now := metav1.Now()
	cond.LastTransitionTime, cond.LastHeartbeatTime = now, now

	patch, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.NodeCondition{cond}}})
	if err != nil {
		return fmt.Errorf("node %s condition: %w", n.Name, err)
	}

	_, err = rc.sim.admin.CoreV1().Nodes().PatchStatus(ctx, n.Name, patch)

	return err //nolint:wrapcheck // retried
}
