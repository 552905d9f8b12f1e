package kubereal

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// lbClient is the hcloud CCM's LoadBalancerOps: the Hetzner API with the
// CCM pod's token and configuration, and its network (HCLOUD_NETWORK, a
// name or an ID) resolved as the CCM does when it starts.
type lbClient struct {
	c         *hcloud.Client
	env       podEnv
	networkID int64
}

// Op names of the CCM's errors (hcloud/load_balancers.go, hcops).
const (
	opEnsure  = "hcloud/loadBalancers.EnsureLoadBalancer"
	opCreate  = "hcops/LoadBalancerOps.Create"
	opTargets = "hcops/LoadBalancerOps.ReconcileHCLBTargets"
)

func (s *Simulators) newLBClient(ctx context.Context, env podEnv) (*lbClient, error) {
	l := &lbClient{c: s.hcloud(env.vars["HCLOUD_TOKEN"], "hcloud-cloud-controller-manager"), env: env}

	if nw := env.vars[envNetwork]; nw != "" {
		n, _, err := l.c.Network.Get(ctx, nw)
		if err != nil || n == nil {
			return nil, fmt.Errorf("hcloud/newCloud: network %s not found: %w", nw, err)
		}

		l.networkID = n.ID
	}

	return l, nil
}

// byUID is GetByK8SServiceUID: the load balancer labelled with the
// Service's UID; nil when there is none, an error for two.
func (l *lbClient) byUID(ctx context.Context, svc *corev1.Service) (*hcloud.LoadBalancer, error) {
	lbs, err := l.c.LoadBalancer.AllWithOpts(ctx, hcloud.LoadBalancerListOpts{ListOpts: hcloud.ListOpts{LabelSelector: labelServiceUID + "=" + string(svc.UID)}})

	switch {
	case err != nil:
		return nil, fmt.Errorf("hcops/LoadBalancerOps.GetByK8SServiceUID: api error: %w", err)
	case len(lbs) > 1:
		return nil, errors.New("hcops/LoadBalancerOps.GetByK8SServiceUID: non-unique result")
	case len(lbs) == 1:
		return lbs[0], nil
	}

	return nil, nil //nolint:nilnil // not found
}

// lbName is the name annotation, else cloudprovider.DefaultLoadBalancerName:
// "a" and the UID without dashes, cut to 32 characters.
func lbName(svc *corev1.Service) string {
	if v, ok := svc.Annotations[annLBName]; ok {
		return v
	}

	n := "a" + strings.ReplaceAll(string(svc.UID), "-", "")

	return n[:min(len(n), 32)]
}

// ensure is EnsureLoadBalancer: find the load balancer by the Service's
// UID, else adopt one by name, else create it; then reconcile it, its
// services and its targets, and report its addresses.
func (l *lbClient) ensure(ctx context.Context, svc *corev1.Service, nodes []*corev1.Node) (*corev1.LoadBalancerStatus, error) {
	nodes, err := selectNodes(svc, nodes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", opEnsure, err)
	}

	lb, err := l.byUID(ctx, svc)
	if err == nil && lb == nil {
		// Adoption: a load balancer made before the UID label, or by
		// other means, is found by name.
		lb, _, err = l.c.LoadBalancer.GetByName(ctx, lbName(svc))
	}

	if err == nil && lb == nil {
		lb, err = l.create(ctx, svc)
	}

	if err == nil {
		lb, err = l.reconcile(ctx, lb, svc, nodes)
	}

	if err != nil {
		return nil, fmt.Errorf("%s: %w", opEnsure, err)
	}

	return l.status(lb, svc)
}

// selectNodes applies the node-selector annotation.
func selectNodes(svc *corev1.Service, nodes []*corev1.Node) ([]*corev1.Node, error) {
	v, ok := svc.Annotations[annLBNodeSelector]
	if !ok {
		return nodes, nil
	}

	sel, err := labels.Parse(v)
	if err != nil {
		return nil, fmt.Errorf("unable to parse the node-selector annotation: %w", err)
	}

	var out []*corev1.Node

	for _, n := range nodes {
		if sel.Matches(labels.Set(n.Labels)) {
			out = append(out, n)
		}
	}

	return out, nil
}

// lbType is the type annotation, else HCLOUD_LOAD_BALANCERS_TYPE, else
// lb11; unset says neither was given.
func (l *lbClient) lbType(svc *corev1.Service) (name string, unset bool) {
	if v, ok := svc.Annotations[annLBType]; ok {
		return v, false
	}

	if v := l.env.vars[envLBType]; v != "" {
		return v, false
	}

	return defaultLBType, true
}

// create is LoadBalancerOps.Create: the location annotation (an empty one
// drops the default) or HCLOUD_LOAD_BALANCERS_LOCATION, else the network
// zone; a location wins over a zone; neither is an error.
func (l *lbClient) create(ctx context.Context, svc *corev1.Service) (*hcloud.LoadBalancer, error) {
	typ, _ := l.lbType(svc)
	opts := hcloud.LoadBalancerCreateOpts{Name: lbName(svc), LoadBalancerType: &hcloud.LoadBalancerType{Name: typ},
		Labels: map[string]string{labelServiceUID: string(svc.UID)}}

	loc := l.env.vars[envLBLocation]
	if v, ok := svc.Annotations[annLBLocation]; ok {
		loc = v
	}

	zone := l.env.vars[envLBNetworkZone]
	if v, ok := svc.Annotations[annLBNetworkZone]; ok {
		zone = v
	}

	switch {
	case loc != "":
		opts.Location = &hcloud.Location{Name: loc}
	case zone != "":
		opts.NetworkZone = hcloud.NetworkZone(zone)
	default:
		return nil, fmt.Errorf("%s: neither %s nor %s set", opCreate, annLBLocation, annLBNetworkZone)
	}

	res, _, err := l.c.LoadBalancer.Create(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", opCreate, err)
	}

	if err := l.c.Action.WaitFor(ctx, res.Action); err != nil {
		return nil, fmt.Errorf("%s: %w", opCreate, err)
	}

	return l.get(ctx, res.LoadBalancer.ID)
}

func (l *lbClient) get(ctx context.Context, id int64) (*hcloud.LoadBalancer, error) {
	lb, _, err := l.c.LoadBalancer.GetByID(ctx, id)
	if err == nil && lb == nil {
		err = fmt.Errorf("load balancer %d: not found", id)
	}

	return lb, err //nolint:wrapcheck // wrapped by the caller
}

// reconcile is ReconcileHCLB, ReconcileHCLBServices and
// ReconcileHCLBTargets, reloading the load balancer after changes.
func (l *lbClient) reconcile(ctx context.Context, lb *hcloud.LoadBalancer, svc *corev1.Service, nodes []*corev1.Node) (*hcloud.LoadBalancer, error) {
	if err := l.reconcileInfo(ctx, lb, svc); err != nil {
		return nil, err
	}

	if err := l.reconcileNetwork(ctx, lb); err != nil {
		return nil, err
	}

	lb, err := l.get(ctx, lb.ID)
	if err != nil {
		return nil, err
	}

	if err := l.reconcileServices(ctx, lb, svc); err != nil {
		return nil, err
	}

	if err := l.reconcileTargets(ctx, lb, svc, nodes); err != nil {
		return nil, err
	}

	return l.get(ctx, lb.ID)
}

// reconcileInfo is changeHCLBInfo and changeType: an adopted load
// balancer gets the Service's UID label (and the name annotation's
// name); a type given by annotation or environment is applied (an unset
// one never downgrades).
func (l *lbClient) reconcileInfo(ctx context.Context, lb *hcloud.LoadBalancer, svc *corev1.Service) error {
	var opts hcloud.LoadBalancerUpdateOpts

	if lb.Labels[labelServiceUID] != string(svc.UID) {
		opts.Labels = maps.Clone(lb.Labels)
		if opts.Labels == nil {
			opts.Labels = map[string]string{}
		}

		opts.Labels[labelServiceUID] = string(svc.UID)
	}

	if v, ok := svc.Annotations[annLBName]; ok && v != lb.Name {
		opts.Name = v
	}

	if opts.Labels != nil || opts.Name != "" {
		if _, _, err := l.c.LoadBalancer.Update(ctx, lb, opts); err != nil {
			return fmt.Errorf("hcops/LoadBalancerOps.changeHCLBInfo: %w", err)
		}
	}

	typ, unset := l.lbType(svc)
	if unset || lb.LoadBalancerType == nil || lb.LoadBalancerType.Name == typ {
		return nil
	}

	a, _, err := l.c.LoadBalancer.ChangeType(ctx, lb, hcloud.LoadBalancerChangeTypeOpts{LoadBalancerType: &hcloud.LoadBalancerType{Name: typ}})
	if err := waitAction(ctx, l.c, a, err); err != nil {
		return fmt.Errorf("hcops/LoadBalancerOps.changeType: %w", err)
	}

	return nil
}

// reconcileNetwork is detachFromNetwork and attachToNetwork: attached to
// the CCM's network only.
func (l *lbClient) reconcileNetwork(ctx context.Context, lb *hcloud.LoadBalancer) error {
	attached := false

	for _, pn := range lb.PrivateNet {
		if pn.Network != nil && pn.Network.ID == l.networkID {
			attached = true

			continue
		}

		a, _, err := l.c.LoadBalancer.DetachFromNetwork(ctx, lb, hcloud.LoadBalancerDetachFromNetworkOpts{Network: pn.Network})
		if err := waitAction(ctx, l.c, a, err); err != nil {
			return fmt.Errorf("hcops/LoadBalancerOps.detachFromNetwork: %w", err)
		}
	}

	if l.networkID == 0 || attached {
		return nil
	}

	a, _, err := l.c.LoadBalancer.AttachToNetwork(ctx, lb, hcloud.LoadBalancerAttachToNetworkOpts{Network: &hcloud.Network{ID: l.networkID}})
	if err := waitAction(ctx, l.c, a, err); err != nil {
		return fmt.Errorf("hcops/LoadBalancerOps.attachToNetwork: %w", err)
	}

	return nil
}

// ensureDeleted is EnsureLoadBalancerDeleted: the load balancer labelled
// with the Service's UID goes, unless it is protected; one adopted by
// name without the label stays.
func (l *lbClient) ensureDeleted(ctx context.Context, svc *corev1.Service) error {
	lb, err := l.byUID(ctx, svc)
	if err != nil {
		return fmt.Errorf("hcloud/loadBalancers.EnsureLoadBalancerDeleted: %w", err)
	}

	if lb == nil || lb.Protection.Delete {
		return nil
	}

	if _, err := l.c.LoadBalancer.Delete(ctx, lb); err != nil && !hcloud.IsError(err, hcloud.ErrorCodeNotFound) {
		return fmt.Errorf("hcloud/loadBalancers.EnsureLoadBalancerDeleted: %w", err)
	}

	return nil
}
