package addons

import (
	"strings"

	"github.com/ohmytalos/ohmytalos/internal/spec"
)

const longhornNS = "longhorn-system"

// longhornKinds are Longhorn's custom resources (group longhorn.io, served
// and stored as v1beta2; longhorn/longhorn chart/templates/crds.yaml).
var longhornKinds = []string{
	"BackingImage", "BackingImageDataSource", "BackingImageManager", "Backup", "BackupBackingImage", "BackupTarget",
	"BackupVolume", "Engine", "EngineImage", "InstanceManager", "Node", "Orphan", "RecurringJob", "Replica", "Setting",
	"ShareManager", "Snapshot", "SupportBundle", "SystemBackup", "SystemRestore", "Volume", "VolumeAttachment",
}

// longhornCRD declares one Longhorn kind. The chart ships full OpenAPI
// schemas (about 200 KB); ohmytalos declares the kinds with an open schema
// and the status subresource, which is what the manager needs to run, and
// leaves validation to Longhorn's own admission webhook.
func longhornCRD(kind string) Object {
	plural := strings.ToLower(kind) + "s"
	return newObject("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", plural+".longhorn.io").with("spec", m{
		"group": "longhorn.io",
		"names": m{"kind": kind, "listKind": kind + "List", "plural": plural, "singular": strings.ToLower(kind)},
		"scope": "Namespaced",
		"versions": l{m{
			"name": "v1beta2", "served": true, "storage": true,
			"schema":       m{"openAPIV3Schema": m{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
			"subresources": m{"status": m{}},
		}},
	})
}

// longhorn renders the subset of Longhorn's chart that runs it: the
// namespace (privileged: the manager mounts host paths), RBAC, the CRDs,
// the default settings (disks from the node labels and annotations the
// configs set: create-default-disk-labeled-nodes), the manager DaemonSet,
// the driver deployer (it installs Longhorn's CSI driver itself), the
// manager's services and a StorageClass (not the default: the Hetzner CSI
// driver's is). Left out: the UI, ingress, backups, monitoring, the
// upgrade/uninstall jobs.
func longhorn(sp *spec.Spec) Addon {
	v := sp.Addons.Longhorn.Version
	mgr := image("docker.io/longhornio/longhorn-manager", v)
	ns := newObject("v1", "Namespace", "", longhornNS)
	ns.setLabels(map[string]string{"pod-security.kubernetes.io/enforce": "privileged", "pod-security.kubernetes.io/audit": "privileged",
		"pod-security.kubernetes.io/warn": "privileged"})
	objs := []Object{ns}
	for _, k := range longhornKinds {
		objs = append(objs, longhornCRD(k))
	}
	settings := newObject("v1", "ConfigMap", longhornNS, "longhorn-default-setting").with("data", m{
		"default-setting.yaml": "create-default-disk-labeled-nodes: true\ndefault-data-path: /var/lib/longhorn\n",
	})
	sel := labelMap("app", "longhorn-manager")
	manager := workload("DaemonSet", longhornNS, "longhorn-manager", sel, nil, m{
		"serviceAccountName": "longhorn-service-account",
		"priorityClassName":  "system-node-critical",
		"containers": l{m{
			"name": "longhorn-manager", "image": mgr,
			"command": strs("longhorn-manager", "-d", "daemon",
				"--engine-image", image("docker.io/longhornio/longhorn-engine", v),
				"--instance-manager-image", image("docker.io/longhornio/longhorn-instance-manager", v),
				"--share-manager-image", image("docker.io/longhornio/longhorn-share-manager", v),
				"--backing-image-manager-image", image("docker.io/longhornio/backing-image-manager", v),
				"--manager-image", mgr,
				"--service-account", "longhorn-service-account"),
			"securityContext": m{"privileged": true},
			"env": l{fieldEnv("POD_NAME", "metadata.name"), fieldEnv("POD_NAMESPACE", "metadata.namespace"),
				fieldEnv("POD_IP", "status.podIP"), fieldEnv("NODE_NAME", "spec.nodeName")},
			"ports": l{m{"name": "manager", "containerPort": 9500}, m{"name": "conversion-wh", "containerPort": 9501},
				m{"name": "admission-wh", "containerPort": 9502}, m{"name": "recov-backend", "containerPort": 9503}},
			"readinessProbe": m{"httpGet": m{"path": "/v1/healthz", "port": 9502, "scheme": "HTTPS"}},
			"volumeMounts": l{mount("dev", "/host/dev"), mount("proc", "/host/proc"),
				m{"name": "longhorn", "mountPath": "/var/lib/longhorn", "mountPropagation": "Bidirectional"}},
		}},
		"volumes": l{hostPathVolume("dev", "/dev", ""), hostPathVolume("proc", "/proc", ""),
			hostPathVolume("longhorn", "/var/lib/longhorn", "")},
	})
	dsel := labelMap("app", "longhorn-driver-deployer")
	deployer := workload("Deployment", longhornNS, "longhorn-driver-deployer", dsel, m{
		"replicas": 1,
	}, m{
		"serviceAccountName": "longhorn-service-account",
		"initContainers": l{m{"name": "wait-longhorn-manager", "image": mgr,
			"command": strs("sh", "-c", "while [ $(curl -m 1 -s -o /dev/null -w \"%{http_code}\" http://longhorn-backend:9500/v1) != \"200\" ]; do echo waiting; sleep 2; done")}},
		"containers": l{m{
			"name": "longhorn-driver-deployer", "image": mgr,
			"command": strs("longhorn-manager", "-d", "deploy-driver", "--manager-image", mgr, "--manager-url", "http://longhorn-backend:9500/v1"),
			"env": l{fieldEnv("POD_NAMESPACE", "metadata.namespace"), fieldEnv("NODE_NAME", "spec.nodeName"),
				m{"name": "SERVICE_ACCOUNT", "valueFrom": m{"fieldRef": m{"fieldPath": "spec.serviceAccountName"}}}},
		}},
	})
	service := func(name, portName string, port int) Object {
		return newObject("v1", "Service", longhornNS, name).with("spec", m{"selector": sel,
			"ports": l{m{"name": portName, "port": port, "targetPort": portName}}})
	}
	sc := newObject("storage.k8s.io/v1", "StorageClass", "", "longhorn").with("provisioner", "driver.longhorn.io").
		with("allowVolumeExpansion", true).with("reclaimPolicy", "Delete").with("volumeBindingMode", "Immediate").
		with("parameters", m{"numberOfReplicas": "3", "staleReplicaTimeout": "30", "fsType": "ext4", "dataLocality": "disabled"})
	objs = append(objs,
		serviceAccount(longhornNS, "longhorn-service-account"),
		clusterRole("longhorn-role",
			rule([]string{"apiextensions.k8s.io"}, []string{"customresourcedefinitions"}, write),
			rule([]string{""}, []string{"pods", "events", "persistentvolumes", "persistentvolumeclaims", "persistentvolumeclaims/status", "nodes",
				"proxy/nodes", "pods/log", "secrets", "services", "endpoints", "configmaps", "serviceaccounts"}, write),
			rule([]string{""}, []string{"namespaces"}, read),
			rule([]string{"apps"}, []string{"daemonsets", "statefulsets", "deployments"}, write),
			rule([]string{"batch"}, []string{"jobs", "cronjobs"}, write),
			rule([]string{"policy"}, []string{"poddisruptionbudgets"}, write),
			rule([]string{"scheduling.k8s.io"}, []string{"priorityclasses"}, read),
			rule([]string{"storage.k8s.io"}, []string{"storageclasses", "volumeattachments", "volumeattachments/status", "csinodes", "csidrivers"}, write),
			rule([]string{"snapshot.storage.k8s.io"}, []string{"volumesnapshotclasses", "volumesnapshots", "volumesnapshotcontents", "volumesnapshotcontents/status"}, write),
			rule([]string{"longhorn.io"}, []string{"*"}, write),
			rule([]string{"coordination.k8s.io"}, []string{"leases"}, write),
			rule([]string{"metrics.k8s.io"}, []string{"pods", "nodes"}, read),
			rule([]string{"apiregistration.k8s.io"}, []string{"apiservices"}, read),
			rule([]string{"admissionregistration.k8s.io"}, []string{"mutatingwebhookconfigurations", "validatingwebhookconfigurations"}, write),
			rule([]string{"discovery.k8s.io"}, []string{"endpointslices"}, write),
			rule([]string{"rbac.authorization.k8s.io"}, []string{"roles", "rolebindings", "clusterrolebindings", "clusterroles"}, write),
		),
		clusterRoleBinding("longhorn-bind", "longhorn-role", longhornNS, "longhorn-service-account"),
		settings,
		service("longhorn-backend", "manager", 9500),
		service("longhorn-conversion-webhook", "conversion-wh", 9501),
		service("longhorn-admission-webhook", "admission-wh", 9502),
		service("longhorn-recovery-backend", "recov-backend", 9503),
		manager,
		deployer,
		sc,
	)
	return Addon{Name: Longhorn, Version: v, Objects: objs, Workloads: []Workload{
		{"DaemonSet", longhornNS, "longhorn-manager"}, {"Deployment", longhornNS, "longhorn-driver-deployer"},
	}}
}
