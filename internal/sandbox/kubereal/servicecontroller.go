package kubereal

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/record"
)

// The service controller of k8s.io/cloud-provider
// (controllers/service/controller.go) with the hcloud CCM's load balancer
// implementation (hetznercloud/hcloud-cloud-controller-manager
// hcloud/load_balancers.go, internal/hcops/load_balancer.go,
// internal/annotation/load_balancer.go, internal/config; checked at
// commit 6485324f).
const (
	lbCleanupFinalizer = "service.kubernetes.io/load-balancer-cleanup"
	labelExcludeLB     = "node.kubernetes.io/exclude-from-external-load-balancers"
	taintToBeDeleted   = "ToBeDeletedByClusterAutoscaler"
	labelServiceUID    = "hcloud-ccm/service-uid"
	defaultLBType      = "lb11"

	annLBName              = "load-balancer.hetzner.cloud/name"
	annLBLocation          = "load-balancer.hetzner.cloud/location"
	annLBNetworkZone       = "load-balancer.hetzner.cloud/network-zone"
	annLBType              = "load-balancer.hetzner.cloud/type"
	annLBUsePrivateIP      = "load-balancer.hetzner.cloud/use-private-ip"
	annLBIPv6Disabled      = "load-balancer.hetzner.cloud/ipv6-disabled"
	annLBDisablePrivIngr   = "load-balancer.hetzner.cloud/disable-private-ingress"
	annLBHostname          = "load-balancer.hetzner.cloud/hostname"
	annLBProxyProtocol     = "load-balancer.hetzner.cloud/uses-proxyprotocol"
	annLBNodeSelector      = "load-balancer.hetzner.cloud/node-selector"
	envLBEnabled           = "HCLOUD_LOAD_BALANCERS_ENABLED"
	envLBLocation          = "HCLOUD_LOAD_BALANCERS_LOCATION"
	envLBNetworkZone       = "HCLOUD_LOAD_BALANCERS_NETWORK_ZONE"
	envLBType              = "HCLOUD_LOAD_BALANCERS_TYPE"
	envLBUsePrivateIP      = "HCLOUD_LOAD_BALANCERS_USE_PRIVATE_IP"
	envLBDisableIPv6       = "HCLOUD_LOAD_BALANCERS_DISABLE_IPV6"
	envLBDisablePrivIngr   = "HCLOUD_LOAD_BALANCERS_DISABLE_PRIVATE_INGRESS"
	envLBUsesProxyProtocol = "HCLOUD_LOAD_BALANCERS_USES_PROXYPROTOCOL"
	envNetwork             = "HCLOUD_NETWORK"
)

// serviceController provisions a Hetzner load balancer per LoadBalancer
// Service while a Ready hcloud CCM pod runs.
type serviceController struct {
	sim      *Simulators
	recorder record.EventRecorder
	// state per Service UID: the inputs of the last successful sync, and
	// when a failed one may be retried.
	state map[string]lbState
}

type lbState struct {
	synced, failed string
	retry          time.Time
	failures       int
}

// The service controller's retries (controller.go minRetryDelay and
// maxRetryDelay): exponential from 5s to 5 minutes per Service; a change
// to the Service or the nodes is synced at once.
const (
	lbMinRetry = 5 * time.Second
	lbMaxRetry = 300 * time.Second
)

// backoff is the delay after the nth consecutive failure, doubling from
// minimum to maximum.
func backoff(n int, minimum, maximum time.Duration) time.Duration {
	d := minimum
	for i := 1; i < n && d < maximum; i++ {
		d *= 2
	}

	return min(d, maximum)
}

func (c *serviceController) reconcile(ctx context.Context) {
	env, ok := c.sim.running(ccmImage, nil)
	if !ok || env.vars["HCLOUD_TOKEN"] == "" || !env.flag(envLBEnabled, true) {
		return // the CCM does not run its service controller
	}

	svcs, err := c.sim.services.List(labels.Everything())
	if err != nil {
		return
	}

	nodes := c.lbNodes()
	seen := map[string]bool{}

	var lbc *lbClient

	for _, svc := range svcs {
		uid := string(svc.UID)
		seen[uid] = true
		cleanup := needsCleanup(svc)

		if !wantsLoadBalancer(svc) && !cleanup {
			continue
		}

		st, key := c.state[uid], lbSyncKey(svc, nodes, env, cleanup)
		if st.synced == key || (st.failed == key && time.Now().Before(st.retry)) {
			continue
		}

		if lbc == nil {
			if lbc, err = c.sim.newLBClient(ctx, env); err != nil {
				return // the CCM would not have started: its network is missing
			}
		}

		if err := c.sync(ctx, lbc, svc.DeepCopy(), nodes, cleanup); err != nil {
			// controller.go processServiceCreateOrUpdate.
			c.recorder.Eventf(svc, corev1.EventTypeWarning, "SyncLoadBalancerFailed", "Error syncing load balancer: %v", err)
			n := st.failures + 1
			c.state[uid] = lbState{failed: key, failures: n, retry: time.Now().Add(backoff(n, lbMinRetry, lbMaxRetry))}

			continue
		}

		c.state[uid] = lbState{synced: key}
	}

	for uid := range c.state {
		if !seen[uid] {
			delete(c.state, uid)
		}
	}
}

// wantsLoadBalancer: a LoadBalancer Service without a loadBalancerClass
// (controller.go wantsLoadBalancer).
func wantsLoadBalancer(svc *corev1.Service) bool {
	return svc.Spec.Type == corev1.ServiceTypeLoadBalancer && svc.Spec.LoadBalancerClass == nil
}

// needsCleanup: the finalizer is set and the Service is deleted or no
// longer a LoadBalancer (controller.go needsCleanup).
func needsCleanup(svc *corev1.Service) bool {
	if !slices.Contains(svc.Finalizers, lbCleanupFinalizer) {
		return false
	}

	return svc.DeletionTimestamp != nil || svc.Spec.Type != corev1.ServiceTypeLoadBalancer
}

// lbNodes are the nodes a load balancer targets (controller.go
// stableNodeSetPredicates): not being deleted, not labelled for exclusion
// (a label value that parses as false keeps the node), not tainted for
// deletion by the cluster autoscaler. Readiness does not count.
func (c *serviceController) lbNodes() []*corev1.Node {
	all, err := c.sim.nodes.List(labels.Everything())
	if err != nil {
		return nil
	}

	var out []*corev1.Node

	for _, n := range all {
		if n.DeletionTimestamp != nil || slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == taintToBeDeleted }) {
			continue
		}

		if v, ok := n.Labels[labelExcludeLB]; ok {
			if b, err := strconv.ParseBool(v); err != nil || b {
				continue
			}
		}

		out = append(out, n)
	}

	slices.SortFunc(out, func(a, b *corev1.Node) int { return strings.Compare(a.Name, b.Name) })

	return out
}

// lbSyncKey is what a sync depends on: when none of it changed since the
// last successful sync, there is nothing to do.
func lbSyncKey(svc *corev1.Service, nodes []*corev1.Node, env podEnv, cleanup bool) string {
	var b strings.Builder

	fmt.Fprint(&b, cleanup, svc.Spec.Type, svc.Annotations, len(svc.Status.LoadBalancer.Ingress))

	for _, p := range svc.Spec.Ports {
		fmt.Fprint(&b, "|", p.Protocol, p.Port, p.NodePort)
	}

	for _, n := range nodes {
		fmt.Fprint(&b, "|", n.Name, n.Spec.ProviderID, n.Labels)
	}

	for _, k := range []string{envLBLocation, envLBNetworkZone, envLBType, envLBUsePrivateIP, envLBDisableIPv6, envLBDisablePrivIngr, envLBUsesProxyProtocol, envNetwork} {
		fmt.Fprint(&b, "|", env.vars[k])
	}

	return b.String()
}

// sync is syncLoadBalancerIfNeeded: delete the load balancer and drop the
// finalizer, or add the finalizer first and then ensure the load
// balancer; then record its status.
func (c *serviceController) sync(ctx context.Context, lbc *lbClient, svc *corev1.Service, nodes []*corev1.Node, cleanup bool) error {
	var status corev1.LoadBalancerStatus

	if cleanup {
		c.recorder.Event(svc, corev1.EventTypeNormal, "DeletingLoadBalancer", "Deleting load balancer")

		if err := lbc.ensureDeleted(ctx, svc); err != nil {
			return fmt.Errorf("failed to delete load balancer: %w", err)
		}

		var err error
		if svc, err = c.setFinalizer(ctx, svc, false); err != nil {
			return fmt.Errorf("failed to remove load balancer cleanup finalizer: %w", err)
		}

		c.recorder.Event(svc, corev1.EventTypeNormal, "DeletedLoadBalancer", "Deleted load balancer")
	} else {
		c.recorder.Event(svc, corev1.EventTypeNormal, "EnsuringLoadBalancer", "Ensuring load balancer")

		var err error
		if svc, err = c.setFinalizer(ctx, svc, true); err != nil {
			return fmt.Errorf("failed to add load balancer cleanup finalizer: %w", err)
		}

		if len(nodes) == 0 {
			c.recorder.Event(svc, corev1.EventTypeWarning, "UnAvailableLoadBalancer", "There are no available nodes for LoadBalancer")
		}

		st, err := lbc.ensure(ctx, svc, nodes)
		if err != nil {
			return fmt.Errorf("failed to ensure load balancer: %w", err)
		}

		status = *st

		c.recorder.Event(svc, corev1.EventTypeNormal, "EnsuredLoadBalancer", "Ensured load balancer")
	}

	return c.patchStatus(ctx, svc, status)
}

func (c *serviceController) setFinalizer(ctx context.Context, svc *corev1.Service, on bool) (*corev1.Service, error) {
	if slices.Contains(svc.Finalizers, lbCleanupFinalizer) == on {
		return svc, nil
	}

	svc = svc.DeepCopy()
	if on {
		svc.Finalizers = append(svc.Finalizers, lbCleanupFinalizer)
	} else {
		svc.Finalizers = slices.DeleteFunc(svc.Finalizers, func(f string) bool { return f == lbCleanupFinalizer })
	}

	out, err := c.sim.admin.CoreV1().Services(svc.Namespace).Update(ctx, svc, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return svc, nil // gone once the finalizer went
	}

	return out, err //nolint:wrapcheck // wrapped by the caller
}

func (c *serviceController) patchStatus(ctx context.Context, svc *corev1.Service, status corev1.LoadBalancerStatus) error {
	if lbStatusEqual(svc.Status.LoadBalancer, status) {
		return nil
	}

	svc = svc.DeepCopy()
	svc.Status.LoadBalancer = status

	if _, err := c.sim.admin.CoreV1().Services(svc.Namespace).UpdateStatus(ctx, svc, metav1.UpdateOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("failed to update load balancer status: %w", err)
	}

	return nil
}

func lbStatusEqual(a, b corev1.LoadBalancerStatus) bool {
	return slices.EqualFunc(a.Ingress, b.Ingress, func(x, y corev1.LoadBalancerIngress) bool {
		return x.IP == y.IP && x.Hostname == y.Hostname && (x.IPMode == nil) == (y.IPMode == nil) && (x.IPMode == nil || *x.IPMode == *y.IPMode)
	})
}

// serverIDs are the Hetzner server IDs of nodes with an hcloud:// provider
// ID; the CCM skips the others (with an UnknownProviderIDPrefix event).
func serverIDs(nodes []*corev1.Node) map[int64]*corev1.Node {
	out := map[int64]*corev1.Node{}

	for _, n := range nodes {
		if id, err := strconv.ParseInt(strings.TrimPrefix(n.Spec.ProviderID, "hcloud://"), 10, 64); err == nil && strings.HasPrefix(n.Spec.ProviderID, "hcloud://") {
			out[id] = n
		}
	}

	return out
}

// annBool is a boolean annotation; ok is false when unset.
func annBool(svc *corev1.Service, name string) (value, ok bool, err error) {
	v, set := svc.Annotations[name]
	if !set {
		return false, false, nil
	}

	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, true, fmt.Errorf("annotation %s: %q is not a boolean: %w", name, v, err)
	}

	return b, true, nil
}

// setting is an annotation's boolean, else the environment's default.
func setting(svc *corev1.Service, ann string, env podEnv, envName string, def bool) (bool, error) {
	v, ok, err := annBool(svc, ann)
	if err != nil || ok {
		return v, err
	}

	return env.flag(envName, def), nil
}
