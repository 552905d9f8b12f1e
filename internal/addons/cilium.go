package addons

import (
	"fmt"
	"strconv"

	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// Facts from cilium/cilium install/kubernetes/cilium (values.yaml and
// templates/cilium-agent, cilium-operator, cilium-configmap.yaml) and Talos'
// Cilium guide (docs.siderolabs.com, kubernetes-guides/cni/deploying-cilium).

// TalosAgentCaps are the cilium-agent capabilities Talos' guide sets: the
// chart's defaults minus SYS_MODULE, which Talos does not grant.
var talosAgentCaps = []string{"CHOWN", "KILL", "NET_ADMIN", "NET_RAW", "IPC_LOCK", "SYS_ADMIN", "SYS_RESOURCE", "DAC_OVERRIDE", "FOWNER", "SETGID", "SETUID"}

// talosCleanCaps are clean-cilium-state's capabilities, minus SYS_MODULE.
var talosCleanCaps = []string{"NET_ADMIN", "SYS_ADMIN", "SYS_RESOURCE"}

// HetznerMTU is the MTU of Hetzner private networks (field notes, pitfall 8).
const HetznerMTU = 1450

// cgroupHostRoot is where Talos mounts cgroup2; Cilium must not mount its own.
const cgroupHostRoot = "/sys/fs/cgroup"

const ciliumNS = "kube-system"

// ciliumConfig is the cilium-config ConfigMap: the agent's and operator's
// flags (one key per flag; the agent reads them with build-config).
func ciliumConfig(sp *spec.Spec) map[string]string {
	c := map[string]string{
		"cluster-name":                    "default",
		"cluster-id":                      "0",
		"debug":                           "false",
		"identity-allocation-mode":        "crd",
		"ipam":                            "kubernetes",
		"kube-proxy-replacement":          "true",
		"enable-ipv4":                     "true",
		"enable-ipv6":                     "false",
		"enable-ipv4-masquerade":          "true",
		"enable-bpf-masquerade":           "false",
		"cgroup-root":                     cgroupHostRoot,
		"mtu":                             strconv.Itoa(HetznerMTU),
		"cni-exclusive":                   "true",
		"write-cni-conf-when-ready":       "/host/etc/cni/net.d/05-cilium.conflist",
		"enable-health-checking":          "true",
		"enable-endpoint-health-checking": "true",
		"enable-l7-proxy":                 "false",
		"external-envoy-proxy":            "false",
		"enable-hubble":                   "false",
		"enable-policy":                   "default",
		// The agent's default, set so that enableDefaultDeny: false in the
		// metadata policy is honoured (pkg/defaults EnableNonDefaultDenyPolicies;
		// when false, Rule.Sanitize forces default deny on).
		"enable-non-default-deny-policies": "true",
		"operator-api-serve-addr":          "127.0.0.1:9234",
	}
	if nativeRouting(sp) {
		// Pod routes live in the Hetzner network (the cloud controller's
		// route controller writes one per node's pod CIDR), and every address
		// in the network is reachable without SNAT.
		c["routing-mode"] = "native"
		c["ipv4-native-routing-cidr"] = sp.Network.CIDR
		c["auto-direct-node-routes"] = "false"
	} else {
		// VXLAN: Cilium subtracts the 50-byte overhead from the 1450 MTU.
		c["routing-mode"] = "tunnel"
		c["tunnel-protocol"] = "vxlan"
	}
	return c
}

// cilium renders the agent DaemonSet, the operator Deployment, their RBAC,
// the ConfigMap and the policy keeping pods off the metadata service
// (metadata_policy.go). The operator registers Cilium's CRDs itself.
func cilium(sp *spec.Spec) (Addon, error) {
	v := sp.Addons.Cilium.Version
	data := m{}
	for k, val := range ciliumConfig(sp) {
		data[k] = val
	}
	cm := newObject("v1", "ConfigMap", ciliumNS, "cilium-config").with("data", data)
	objs := []Object{
		serviceAccount(ciliumNS, "cilium"),
		serviceAccount(ciliumNS, "cilium-operator"),
		clusterRole("cilium",
			rule([]string{"networking.k8s.io"}, []string{"networkpolicies"}, read),
			rule([]string{"discovery.k8s.io"}, []string{"endpointslices"}, read),
			rule([]string{""}, []string{"namespaces", "services", "pods", "endpoints", "nodes"}, read),
			rule([]string{""}, []string{"nodes", "nodes/status", "pods"}, []string{"get", "patch"}),
			rule([]string{"apiextensions.k8s.io"}, []string{"customresourcedefinitions"}, read),
			rule([]string{"cilium.io"}, []string{"*"}, write),
		),
		clusterRoleBinding("cilium", "cilium", ciliumNS, "cilium"),
		// build-config reads cilium-config through the API (the chart's
		// cilium-config-agent Role): a Role, not cluster-wide ConfigMaps.
		newObject("rbac.authorization.k8s.io/v1", "Role", ciliumNS, "cilium-config-agent").
			with("rules", l{rule([]string{""}, []string{"configmaps"}, read)}),
		newObject("rbac.authorization.k8s.io/v1", "RoleBinding", ciliumNS, "cilium-config-agent").
			with("roleRef", m{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cilium-config-agent"}).
			with("subjects", l{m{"kind": "ServiceAccount", "name": "cilium", "namespace": ciliumNS}}),
		clusterRole("cilium-operator",
			rule([]string{""}, []string{"pods"}, []string{"get", "list", "watch", "delete"}),
			rule([]string{""}, []string{"nodes", "namespaces", "services", "endpoints", "configmaps"}, read),
			rule([]string{""}, []string{"nodes", "nodes/status"}, []string{"patch"}),
			rule([]string{""}, []string{"services/status"}, []string{"update", "patch"}),
			rule([]string{"discovery.k8s.io"}, []string{"endpointslices"}, read),
			rule([]string{"apiextensions.k8s.io"}, []string{"customresourcedefinitions"}, []string{"get", "list", "watch", "create", "update"}),
			rule([]string{"cilium.io"}, []string{"*"}, write),
			rule([]string{"coordination.k8s.io"}, []string{"leases"}, []string{"create", "get", "update"}),
		),
		clusterRoleBinding("cilium-operator", "cilium-operator", ciliumNS, "cilium-operator"),
		cm,
		ciliumAgent(v),
		ciliumOperator(sp, v),
		// Last: its CRD exists once the operator above has started.
		metadataPolicy(),
	}
	return Addon{Name: Cilium, Version: v, Objects: objs, Workloads: []Workload{
		{"DaemonSet", ciliumNS, "cilium"}, {"Deployment", ciliumNS, "cilium-operator"},
	}}, nil
}

func kubePrismEnv() l {
	return env("KUBERNETES_SERVICE_HOST", kubePrismHost, "KUBERNETES_SERVICE_PORT", kubePrismPort)
}

func caps(add []string, privileged bool) m {
	sc := m{"capabilities": m{"add": strs(add...), "drop": strs("ALL")}, "seLinuxOptions": m{"level": "s0", "type": "spc_t"}}
	if privileged {
		return m{"privileged": true}
	}
	return sc
}

// ciliumAgent is the per-node agent. Its hostPath /etc/cni/net.d is where
// it writes the CNI config once ready: what kubelet (and the sandbox)
// takes as "a CNI is installed".
func ciliumAgent(v string) Object {
	img := image("quay.io/cilium/cilium", v)
	nodeEnv := l{fieldEnv("K8S_NODE_NAME", "spec.nodeName"), fieldEnv("CILIUM_K8S_NAMESPACE", "metadata.namespace")}
	agentEnv := append(append(l{}, nodeEnv...), kubePrismEnv()...)
	probe := func(failures int) m {
		return m{"httpGet": m{"host": "127.0.0.1", "path": "/healthz", "port": 9879, "scheme": "HTTP",
			"httpHeaders": l{m{"name": "brief", "value": "true"}}}, "periodSeconds": 10, "failureThreshold": failures, "timeoutSeconds": 5}
	}
	initC := l{
		m{"name": "config", "image": img, "command": strs("cilium-dbg", "build-config"),
			"env": agentEnv, "volumeMounts": l{mount("tmp", "/tmp")}},
		m{"name": "apply-sysctl-overwrites", "image": img, "command": strs("sh", "-ec",
			"cp /usr/bin/cilium-sysctlfix /hostbin; nsenter --mount=/hostproc/1/ns/mnt \"${BIN_PATH}/cilium-sysctlfix\"; rm /hostbin/cilium-sysctlfix"),
			"env":             env("BIN_PATH", "/opt/cni/bin"),
			"volumeMounts":    l{mount("hostproc", "/hostproc"), mount("cni-path", "/hostbin")},
			"securityContext": caps([]string{"SYS_ADMIN", "SYS_CHROOT", "SYS_PTRACE"}, false)},
		m{"name": "mount-bpf-fs", "image": img, "command": strs("/bin/bash", "-c", "--"),
			"args":            strs("mount | grep \"/sys/fs/bpf type bpf\" || mount -t bpf bpf /sys/fs/bpf"),
			"securityContext": caps(nil, true),
			"volumeMounts":    l{m{"name": "bpf-maps", "mountPath": "/sys/fs/bpf", "mountPropagation": "Bidirectional"}}},
		m{"name": "clean-cilium-state", "image": img, "command": strs("/init-container.sh"),
			"env": append(l{
				m{"name": "CILIUM_ALL_STATE", "valueFrom": m{"configMapKeyRef": m{"name": "cilium-config", "key": "clean-cilium-state", "optional": true}}},
				m{"name": "CILIUM_BPF_STATE", "valueFrom": m{"configMapKeyRef": m{"name": "cilium-config", "key": "clean-cilium-bpf-state", "optional": true}}},
			}, kubePrismEnv()...),
			"securityContext": caps(talosCleanCaps, false),
			"volumeMounts": l{mount("bpf-maps", "/sys/fs/bpf"),
				m{"name": "cilium-cgroup", "mountPath": cgroupHostRoot, "mountPropagation": "HostToContainer"},
				mount("cilium-run", "/var/run/cilium")}},
		m{"name": "install-cni-binaries", "image": img, "command": strs("/install-plugin.sh"),
			"securityContext": caps(nil, false),
			"volumeMounts":    l{mount("cni-path", "/host/opt/cni/bin")}},
	}
	agent := m{
		"name": "cilium-agent", "image": img, "command": strs("cilium-agent"), "args": strs("--config-dir=/tmp/cilium/config-map"),
		"env":             append(agentEnv, env("CILIUM_CLUSTERMESH_CONFIG", "/var/lib/cilium/clustermesh/")...),
		"startupProbe":    probe(105),
		"livenessProbe":   probe(10),
		"readinessProbe":  probe(3),
		"lifecycle":       m{"preStop": m{"exec": m{"command": strs("/cni-uninstall.sh")}}},
		"securityContext": caps(talosAgentCaps, false),
		"volumeMounts": l{
			mount("host-proc-sys-net", "/host/proc/sys/net"),
			mount("host-proc-sys-kernel", "/host/proc/sys/kernel"),
			m{"name": "bpf-maps", "mountPath": "/sys/fs/bpf", "mountPropagation": "HostToContainer"},
			// Talos' cgroup2 at the host root (cgroup.hostRoot).
			mount("cilium-cgroup", cgroupHostRoot),
			mount("cilium-run", "/var/run/cilium"),
			mount("etc-cni-netd", "/host/etc/cni/net.d"),
			m{"name": "lib-modules", "mountPath": "/lib/modules", "readOnly": true},
			mount("xtables-lock", "/run/xtables.lock"),
			mount("tmp", "/tmp"),
		},
	}
	volumes := l{
		m{"name": "tmp", "emptyDir": m{}},
		hostPathVolume("cilium-run", "/var/run/cilium", "DirectoryOrCreate"),
		hostPathVolume("bpf-maps", "/sys/fs/bpf", "DirectoryOrCreate"),
		hostPathVolume("hostproc", "/proc", "Directory"),
		hostPathVolume("cilium-cgroup", cgroupHostRoot, "DirectoryOrCreate"),
		hostPathVolume("cni-path", "/opt/cni/bin", "DirectoryOrCreate"),
		hostPathVolume("etc-cni-netd", "/etc/cni/net.d", "DirectoryOrCreate"),
		hostPathVolume("lib-modules", "/lib/modules", ""),
		hostPathVolume("xtables-lock", "/run/xtables.lock", "FileOrCreate"),
		hostPathVolume("host-proc-sys-net", "/proc/sys/net", "Directory"),
		hostPathVolume("host-proc-sys-kernel", "/proc/sys/kernel", "Directory"),
	}
	sel := labelMap("k8s-app", "cilium")
	return newObject("apps/v1", "DaemonSet", ciliumNS, "cilium").with("spec", m{
		"selector":       m{"matchLabels": sel},
		"updateStrategy": m{"type": "RollingUpdate", "rollingUpdate": m{"maxUnavailable": 2}},
		"template": m{
			"metadata": m{"labels": labelMap("k8s-app", "cilium", "app.kubernetes.io/name", "cilium-agent", "app.kubernetes.io/part-of", "cilium")},
			"spec": m{
				"serviceAccountName":            "cilium",
				"automountServiceAccountToken":  true,
				"hostNetwork":                   true,
				"priorityClassName":             "system-node-critical",
				"restartPolicy":                 "Always",
				"terminationGracePeriodSeconds": 1,
				"nodeSelector":                  labelMap("kubernetes.io/os", "linux"),
				"tolerations":                   l{m{"operator": "Exists"}},
				"initContainers":                initC,
				"containers":                    l{agent},
				"volumes":                       volumes,
			},
		},
	})
}

// ciliumOperator runs on the control planes (they exist from the start;
// workers may join later), two replicas spread over hosts when HA.
func ciliumOperator(sp *spec.Spec, v string) Object {
	sel := labelMap("io.cilium/app", "operator", "name", "cilium-operator")
	c := m{
		"name": "cilium-operator", "image": image("quay.io/cilium/operator-generic", v),
		"command": strs("cilium-operator-generic"),
		"args":    strs("--config-dir=/tmp/cilium/config-map", "--debug=$(CILIUM_DEBUG)"),
		"env": append(l{fieldEnv("K8S_NODE_NAME", "spec.nodeName"), fieldEnv("CILIUM_K8S_NAMESPACE", "metadata.namespace"),
			m{"name": "CILIUM_DEBUG", "valueFrom": m{"configMapKeyRef": m{"name": "cilium-config", "key": "debug", "optional": true}}}},
			kubePrismEnv()...),
		"livenessProbe":  m{"httpGet": m{"host": "127.0.0.1", "path": "/healthz", "port": 9234, "scheme": "HTTP"}, "initialDelaySeconds": 60, "periodSeconds": 10, "timeoutSeconds": 3},
		"readinessProbe": m{"httpGet": m{"host": "127.0.0.1", "path": "/healthz", "port": 9234, "scheme": "HTTP"}, "periodSeconds": 5, "timeoutSeconds": 3, "failureThreshold": 5},
		"volumeMounts":   l{m{"name": "cilium-config-path", "mountPath": "/tmp/cilium/config-map", "readOnly": true}},
	}
	return newObject("apps/v1", "Deployment", ciliumNS, "cilium-operator").with("spec", m{
		"replicas": controlPlaneReplicas(sp),
		"selector": m{"matchLabels": sel},
		"strategy": m{"type": "RollingUpdate", "rollingUpdate": m{"maxSurge": "25%", "maxUnavailable": "50%"}},
		"template": m{
			"metadata": m{"labels": labelMap("io.cilium/app", "operator", "name", "cilium-operator", "app.kubernetes.io/name", "cilium-operator", "app.kubernetes.io/part-of", "cilium")},
			"spec": m{
				"serviceAccountName": "cilium-operator",
				"hostNetwork":        true,
				"priorityClassName":  "system-cluster-critical",
				"nodeSelector":       labelMap("node-role.kubernetes.io/control-plane", ""),
				"tolerations":        l{m{"operator": "Exists"}},
				"affinity": m{"podAntiAffinity": m{"requiredDuringSchedulingIgnoredDuringExecution": l{
					m{"labelSelector": m{"matchLabels": labelMap("io.cilium/app", "operator")}, "topologyKey": "kubernetes.io/hostname"}}}},
				"containers": l{c},
				"volumes":    l{m{"name": "cilium-config-path", "configMap": m{"name": "cilium-config"}}},
			},
		},
	})
}

// CiliumSummary describes the rendered routing for docs and plans.
func CiliumSummary(sp *spec.Spec) string {
	if nativeRouting(sp) {
		return fmt.Sprintf("native routing over %s, MTU %d", sp.Network.CIDR, HetznerMTU)
	}
	return fmt.Sprintf("VXLAN tunnel, underlay MTU %d", HetznerMTU)
}
