package talosfake

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/siderolabs/talos/pkg/machinery/constants"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubefake"
)

// Well-known node labels and taints, as Talos and the kubelet set them.
const (
	labelControlPlane  = "node-role.kubernetes.io/control-plane"
	labelExcludeFromLB = "node.kubernetes.io/exclude-from-external-load-balancers"
)

// kubeCluster is the Kubernetes side of one Talos cluster: one store (etcd)
// behind every control plane's kube-apiserver.
type kubeCluster struct {
	srv *kubefake.Server
	// kubelets are the node names whose kubelet the sandbox started.
	kubelets map[string]bool
}

// kubeClusterLocked returns the cluster's Kubernetes store, creating it
// from the machine config of the first control plane that serves it.
func (c *Cluster) kubeClusterLocked(n *Node) (*kubeCluster, error) {
	tc := c.clusterLocked(n.cfg)
	if tc.kube != nil {
		return tc.kube, nil
	}

	pool, err := kubeClientCAs(n.cfg.k8sCA)
	if err != nil {
		return nil, err
	}

	ks, err := loadKubeSettings(n.cfg.raw)
	if err != nil {
		return nil, err
	}

	tc.kube = &kubeCluster{
		srv: kubefake.New(kubefake.Options{
			Version: n.cfg.k8sVersion, ClientCAs: pool, PodCIDRs: ks.podCIDRs, ServiceCIDRs: ks.serviceCIDRs,
			HCloudEndpoint: c.opts.HCloudEndpoint,
		}),
		kubelets: map[string]bool{},
	}

	return tc.kube, nil
}

// syncKubeletsLocked starts the kubelet of every running node of the Talos
// cluster (it registers its Node) and stops those of nodes that went away.
func (c *Cluster) syncKubeletsLocked(clusterID string, kc *kubeCluster) {
	running := map[string]bool{}

	for _, n := range c.sortedNodesLocked() {
		if n.cfg.clusterID != clusterID || n.ctx.Err() != nil {
			continue
		}

		reg, err := n.kubeletRegistration()
		if err != nil {
			continue
		}

		running[reg.Name] = true

		if err := kc.srv.RegisterNode(reg); err == nil {
			kc.kubelets[reg.Name] = true
		}
	}

	for _, name := range slices.Sorted(maps.Keys(kc.kubelets)) {
		if !running[name] {
			kc.srv.StopKubelet(name)
			delete(kc.kubelets, name)
		}
	}
}

// kubeletRegistration is what the node's kubelet registers: its name (the
// hostname), version (the machine.kubelet.image tag), Talos' node labels
// and taints, and the uninitialized taint under an external cloud provider
// (Talos runs the kubelet with --cloud-provider=external when
// cluster.externalCloudProvider.enabled).
func (n *Node) kubeletRegistration() (kubefake.NodeRegistration, error) {
	ks, err := loadKubeSettings(n.cfg.raw)
	if err != nil {
		return kubefake.NodeRegistration{}, err
	}

	name := n.opts.Name
	if n.cfg.hostname != "" {
		name = n.cfg.hostname
	}

	reg := kubefake.NodeRegistration{
		Name:                  name,
		KubeletVersion:        imageTag(ks.kubeletImage, cmp.Or(n.cfg.kubeletVersion, n.cfg.k8sVersion)),
		OSImage:               fmt.Sprintf("Talos (%s)", n.opts.TalosVersion),
		InternalIP:            n.opts.PrivateIP,
		Labels:                maps.Clone(n.cfg.labels),
		ExternalCloudProvider: ks.externalCloud,
		// Talos' node label and taint controllers keep them in sync
		// (machinery constants.AnnotationOwnedLabels, AnnotationOwnedTaints).
		OwnedLabelsAnnotation: constants.AnnotationOwnedLabels,
		OwnedTaintsAnnotation: constants.AnnotationOwnedTaints,
	}

	if reg.InternalIP == "" {
		reg.InternalIP = n.opts.PublicIP
	}

	reg.NoIPv4Egress = !n.hasIPv4Default()

	if n.cfg.controlPlane() {
		// Talos >= 1.8 labels control planes, and excludes them from load balancers.
		reg.Labels[labelControlPlane] = ""
		reg.Labels[labelExcludeFromLB] = ""

		if !n.cfg.schedCPOK {
			reg.Taints = append(reg.Taints, kubefake.Taint{Key: labelControlPlane, Effect: "NoSchedule"})
		}
	}

	// machine.nodeTaints values are "value:Effect" (or ":Effect").
	for _, key := range slices.Sorted(maps.Keys(n.cfg.taints)) {
		value, effect := "", n.cfg.taints[key]
		if i := strings.LastIndex(effect, ":"); i >= 0 {
			value, effect = effect[:i], effect[i+1:]
		}

		reg.Taints = append(reg.Taints, kubefake.Taint{Key: key, Value: value, Effect: effect})
	}

	return reg, nil
}

// imageTag is the tag of an image reference ("ghcr.io/siderolabs/kubelet:v1.35.0"
// -> "v1.35.0"), or fallback without one.
func imageTag(image, fallback string) string {
	if i := strings.LastIndex(image, "@"); i >= 0 {
		image = image[:i]
	}

	if i := strings.LastIndex(image, ":"); i > strings.LastIndex(image, "/") {
		return image[i+1:]
	}

	return fallback
}
