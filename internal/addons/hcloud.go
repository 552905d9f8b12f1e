package addons

import (
	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

const hcloudNS = "kube-system"

// hcloudCCM renders the Hetzner cloud controller manager: it initialises
// nodes (provider ID, addresses, topology labels, removes the uninitialized
// taint), runs load balancers over the private network (HCLOUD_NETWORK) and,
// with native routing, writes one network route per node's pod CIDR.
// Facts: hetznercloud/hcloud-cloud-controller-manager deploy/ccm-networks.yaml
// and chart/values.yaml; HCLOUD_NETWORK_ROUTES_ENABLED from
// docs/explanation/private-networks.md.
func hcloudCCM(sp *spec.Spec) Addon {
	v := sp.Addons.HCloudCCM.Version
	native := nativeRouting(sp)
	args := []string{
		"--allow-untagged-cloud",
		"--cloud-provider=hcloud",
		"--webhook-secure-port=0",
		"--leader-elect=false",
		"--cluster-cidr=" + sp.Network.Pods,
	}
	routes := "false"
	if native {
		// The route controller runs only with node CIDR allocation on.
		args = append(args, "--allocate-node-cidrs=true", "--configure-cloud-routes=true", "--route-reconciliation-period=30s")
		routes = "true"
	} else {
		args = append(args, "--allocate-node-cidrs=false", "--configure-cloud-routes=false")
	}
	envs := l{
		secretEnv("HCLOUD_TOKEN", "hcloud", "token"),
		secretEnv("HCLOUD_NETWORK", "hcloud", "network"),
	}
	envs = append(envs, env("HCLOUD_NETWORK_ROUTES_ENABLED", routes, "ROBOT_ENABLED", "false")...)
	// Without a location (or network zone) the controller refuses every
	// LoadBalancer Service that lacks the annotation, and without private
	// IPs it targets the nodes' public addresses, which the firewall drops.
	// Names: hcloud-cloud-controller-manager internal/config/load_balancer_envs.go
	// (HCLOUD_LOAD_BALANCERS_LOCATION, HCLOUD_LOAD_BALANCERS_USE_PRIVATE_IP).
	envs = append(envs, env("HCLOUD_LOAD_BALANCERS_LOCATION", sp.Location, "HCLOUD_LOAD_BALANCERS_USE_PRIVATE_IP", "true")...)
	envs = append(envs, kubePrismEnv()...)
	c := m{
		"name": "hcloud-cloud-controller-manager", "image": image("docker.io/hetznercloud/hcloud-cloud-controller-manager", v),
		"args": strs(args...), "env": envs,
		"ports":     l{m{"name": "metrics", "containerPort": 8233}},
		"resources": m{"requests": m{"cpu": "100m", "memory": "50Mi"}},
		"securityContext": m{"allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true,
			"capabilities": m{"drop": strs("ALL")}},
	}
	sel := labelMap("app", "hcloud-cloud-controller-manager")
	dep := workload("Deployment", hcloudNS, "hcloud-cloud-controller-manager", sel, m{
		"replicas":             1,
		"revisionHistoryLimit": 2,
	}, m{
		"serviceAccountName": "hcloud-cloud-controller-manager",
		"dnsPolicy":          "Default",
		// hostNetwork: it runs before any CNI, on KubePrism.
		"hostNetwork":       true,
		"priorityClassName": "system-cluster-critical",
		// On the control planes (as ferrous-systems/terraform-hcloud-rke2
		// pins it): on a worker, losing that worker leaves the cluster
		// without its cloud controller, so its Node is never deleted
		// until the pod is evicted (five minutes of unreachable).
		"nodeSelector": labelMap("node-role.kubernetes.io/control-plane", ""),
		"securityContext": m{"runAsNonRoot": true, "runAsUser": 65532, "runAsGroup": 65532,
			"seccompProfile": m{"type": "RuntimeDefault"}},
		"tolerations": l{
			m{"key": "node.cloudprovider.kubernetes.io/uninitialized", "value": "true", "effect": "NoSchedule"},
			m{"key": "CriticalAddonsOnly", "operator": "Exists"},
			m{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"},
			m{"key": "node.kubernetes.io/not-ready", "operator": "Exists"},
		},
		"containers": l{c},
	})
	objs := []Object{
		serviceAccount(hcloudNS, "hcloud-cloud-controller-manager"),
		clusterRole("system:hcloud-cloud-controller-manager",
			rule([]string{""}, []string{"configmaps"}, read),
			rule([]string{""}, []string{"events"}, []string{"create", "patch", "update"}),
			rule([]string{""}, []string{"nodes"}, []string{"*"}),
			rule([]string{""}, []string{"nodes/status"}, []string{"patch"}),
			rule([]string{""}, []string{"services"}, []string{"list", "watch"}),
			rule([]string{""}, []string{"services/status"}, []string{"patch", "update"}),
			rule([]string{""}, []string{"serviceaccounts"}, []string{"create"}),
			rule([]string{"coordination.k8s.io"}, []string{"leases"}, []string{"create", "get", "list", "watch", "update"}),
		),
		clusterRoleBinding("system:hcloud-cloud-controller-manager", "system:hcloud-cloud-controller-manager", hcloudNS, "hcloud-cloud-controller-manager"),
		dep,
	}
	return Addon{Name: HCloudCCM, Version: v, Objects: objs, Workloads: []Workload{{"Deployment", hcloudNS, "hcloud-cloud-controller-manager"}}}
}

// csiSidecars are the Kubernetes CSI sidecar images the driver's release
// ships with (csi-driver deploy/kubernetes/hcloud-csi.yml, v2.22.1).
const (
	csiAttacher    = "registry.k8s.io/sig-storage/csi-attacher:v4.11.0"
	csiResizer     = "registry.k8s.io/sig-storage/csi-resizer:v2.1.0"
	csiProvisioner = "registry.k8s.io/sig-storage/csi-provisioner:v6.2.0"
	csiRegistrar   = "registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.16.0"
	csiLiveness    = "registry.k8s.io/sig-storage/livenessprobe:v2.18.0"
)

// CSIVolumeLabels is the HCLOUD_VOLUME_EXTRA_LABELS value of the CSI
// controller (comma-separated k=v, as the driver parses it): the cluster
// label and, when the cluster has one, its ID, which destroy looks for.
func CSIVolumeLabels(cluster, id string) string {
	v := cloud.LabelCluster + "=" + cluster
	if id != "" {
		v += "," + cloud.LabelClusterID + "=" + id
	}
	return v
}

// hcloudCSI renders the Hetzner CSI driver: the controller (attach, resize,
// provision Hetzner volumes), the node plugin on every node, the CSIDriver
// object and hcloud-volumes as the default StorageClass.
// Facts: hetznercloud/csi-driver deploy/kubernetes/hcloud-csi.yml.
func hcloudCSI(sp *spec.Spec, clusterID string) Addon {
	v := sp.Addons.HCloudCSI.Version
	img := image("docker.io/hetznercloud/hcloud-csi-driver", v)
	sock := mount("socket-dir", "/run/csi")
	health := m{"httpGet": m{"path": "/healthz", "port": "healthz"}, "initialDelaySeconds": 10, "periodSeconds": 2, "timeoutSeconds": 3, "failureThreshold": 5}
	ports := l{m{"name": "metrics", "containerPort": 9189}, m{"name": "healthz", "containerPort": 9808, "protocol": "TCP"}}
	driverEnv := env("CSI_ENDPOINT", "unix:///run/csi/socket", "METRICS_ENDPOINT", "0.0.0.0:9189", "ENABLE_METRICS", "true")
	ctrlLabels := labelMap("app", "hcloud-csi-controller")
	controller := workload("Deployment", hcloudNS, "hcloud-csi-controller", ctrlLabels, m{
		"replicas": 1,
	}, m{
		"serviceAccountName": "hcloud-csi-controller",
		"securityContext":    m{"fsGroup": 1001},
		"containers": l{
			m{"name": "hcloud-csi-driver", "image": img, "args": strs("-controller"),
				"env": append(append(l{}, driverEnv...), fieldEnv("KUBE_NODE_NAME", "spec.nodeName"), secretEnv("HCLOUD_TOKEN", "hcloud", "token"),
					// Every volume the driver creates carries the cluster label
					// besides its own (managed-by=csi-driver, pvc-name, ...), so
					// destroy finds the volumes claims left (csi-driver
					// cmd/controller/main.go reads HCLOUD_VOLUME_EXTRA_LABELS,
					// key=value,...; since v2.15.0).
					m{"name": "HCLOUD_VOLUME_EXTRA_LABELS", "value": CSIVolumeLabels(sp.Name, clusterID)}),
				"ports": ports, "livenessProbe": health, "volumeMounts": l{sock}},
			m{"name": "csi-attacher", "image": csiAttacher, "args": strs("--default-fstype=ext4"), "volumeMounts": l{sock}},
			m{"name": "csi-resizer", "image": csiResizer, "volumeMounts": l{sock}},
			m{"name": "csi-provisioner", "image": csiProvisioner,
				"args": strs("--feature-gates=Topology=true", "--default-fstype=ext4", "--extra-create-metadata", "--strict-topology"), "volumeMounts": l{sock}},
			m{"name": "liveness-probe", "image": csiLiveness, "volumeMounts": l{sock}},
		},
		"volumes": l{m{"name": "socket-dir", "emptyDir": m{}}},
	})
	nodeLabels := labelMap("app", "hcloud-csi")
	plugin := mount("plugin-dir", "/run/csi")
	node := workload("DaemonSet", hcloudNS, "hcloud-csi-node", nodeLabels, m{
		"updateStrategy": m{"type": "RollingUpdate"},
	}, m{
		"securityContext": m{"fsGroup": 1001},
		"tolerations": l{m{"effect": "NoExecute", "operator": "Exists"}, m{"effect": "NoSchedule", "operator": "Exists"},
			m{"key": "CriticalAddonsOnly", "operator": "Exists"}},
		"containers": l{
			m{"name": "csi-node-driver-registrar", "image": csiRegistrar,
				"args":         strs("--kubelet-registration-path=/var/lib/kubelet/plugins/csi.hetzner.cloud/socket"),
				"volumeMounts": l{plugin, mount("registration-dir", "/registration")}},
			m{"name": "liveness-probe", "image": csiLiveness, "volumeMounts": l{plugin}},
			m{"name": "hcloud-csi-driver", "image": img, "args": strs("-node"), "env": driverEnv,
				"securityContext": m{"privileged": true}, "ports": ports, "livenessProbe": health,
				"volumeMounts": l{m{"name": "kubelet-dir", "mountPath": "/var/lib/kubelet", "mountPropagation": "Bidirectional"},
					plugin, mount("device-dir", "/dev")}},
		},
		"volumes": l{
			hostPathVolume("kubelet-dir", "/var/lib/kubelet", "Directory"),
			hostPathVolume("plugin-dir", "/var/lib/kubelet/plugins/csi.hetzner.cloud/", "DirectoryOrCreate"),
			hostPathVolume("registration-dir", "/var/lib/kubelet/plugins_registry/", "Directory"),
			hostPathVolume("device-dir", "/dev", "Directory"),
		},
	})
	driver := newObject("storage.k8s.io/v1", "CSIDriver", "", "csi.hetzner.cloud").with("spec", m{
		"attachRequired": true, "fsGroupPolicy": "File", "podInfoOnMount": true, "seLinuxMount": true,
		"volumeLifecycleModes": strs("Persistent"),
	})
	sc := newObject("storage.k8s.io/v1", "StorageClass", "", "hcloud-volumes")
	sc.meta()["annotations"] = m{"storageclass.kubernetes.io/is-default-class": "true"}
	sc.with("provisioner", "csi.hetzner.cloud").with("volumeBindingMode", "WaitForFirstConsumer").
		with("allowVolumeExpansion", true).with("reclaimPolicy", "Delete")
	objs := []Object{
		serviceAccount(hcloudNS, "hcloud-csi-controller"),
		clusterRole("hcloud-csi-controller",
			rule([]string{""}, []string{"persistentvolumes"}, []string{"get", "list", "watch", "create", "delete", "update", "patch"}),
			rule([]string{""}, []string{"persistentvolumeclaims", "persistentvolumeclaims/status"}, []string{"get", "list", "watch", "update", "patch"}),
			rule([]string{""}, []string{"nodes", "pods"}, read),
			rule([]string{""}, []string{"events"}, []string{"get", "list", "watch", "create", "update", "patch"}),
			rule([]string{"storage.k8s.io"}, []string{"csinodes", "storageclasses", "volumeattributesclasses"}, read),
			rule([]string{"storage.k8s.io"}, []string{"volumeattachments"}, []string{"get", "list", "watch", "update", "patch"}),
			rule([]string{"storage.k8s.io"}, []string{"volumeattachments/status"}, []string{"patch"}),
			rule([]string{"snapshot.storage.k8s.io"}, []string{"volumesnapshots", "volumesnapshotcontents"}, []string{"get", "list"}),
		),
		clusterRoleBinding("hcloud-csi-controller", "hcloud-csi-controller", hcloudNS, "hcloud-csi-controller"),
		driver,
		sc,
		controller,
		node,
	}
	return Addon{Name: HCloudCSI, Version: v, Objects: objs, Workloads: []Workload{
		{"Deployment", hcloudNS, "hcloud-csi-controller"}, {"DaemonSet", hcloudNS, "hcloud-csi-node"},
	}}
}
