package chartrepo_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// talosAgentCaps are Talos' Cilium guide's agent capabilities (no SYS_MODULE).
var talosAgentCaps = []any{"CHOWN", "KILL", "NET_ADMIN", "NET_RAW", "IPC_LOCK", "SYS_ADMIN", "SYS_RESOURCE", "DAC_OVERRIDE", "FOWNER", "SETGID", "SETUID"}

func ciliumValues() map[string]any {
	return map[string]any{
		"ipam":                 map[string]any{"mode": "kubernetes"},
		"kubeProxyReplacement": true,
		"k8sServiceHost":       "localhost",
		"k8sServicePort":       7445,
		"securityContext": map[string]any{"capabilities": map[string]any{
			"ciliumAgent": talosAgentCaps, "cleanCiliumState": []any{"NET_ADMIN", "SYS_ADMIN", "SYS_RESOURCE"},
		}},
		"cgroup":                map[string]any{"autoMount": map[string]any{"enabled": false}, "hostRoot": "/sys/fs/cgroup"},
		"routingMode":           "native",
		"ipv4NativeRoutingCIDR": "10.0.0.0/16",
		"operator":              map[string]any{"replicas": 1},
		"hubble":                map[string]any{"relay": map[string]any{"enabled": true}},
	}
}

func TestCiliumStandInRendersWhatTheKubeletAndOperatorKeyOn(t *testing.T) {
	r := mustRender(t, "cilium", "cilium", "kube-system", ciliumValues())
	ds := r.get(t, "DaemonSet", "kube-system", "cilium")
	spec := podSpec(t, ds)
	if !hostPathMounted(spec, "/etc/cni/net.d") {
		t.Error("the cilium DaemonSet does not mount the host's /etc/cni/net.d: the simulated kubelet would never turn Ready")
	}
	agent := container(t, spec, "cilium-agent")
	if agent["image"] != "quay.io/cilium/cilium:v1.19.6" {
		t.Errorf("agent image %v", agent["image"])
	}
	if e := env(agent); e["KUBERNETES_SERVICE_HOST"] != "localhost" || e["KUBERNETES_SERVICE_PORT"] != "7445" {
		t.Errorf("agent env %v: want KubePrism localhost:7445", e)
	}
	if got, _, _ := unstructured.NestedSlice(agent, "securityContext", "capabilities", "add"); !reflect.DeepEqual(got, talosAgentCaps) {
		t.Errorf("agent capabilities %v, want %v", got, talosAgentCaps)
	}
	clean := container(t, spec, "clean-cilium-state")
	if got, _, _ := unstructured.NestedSlice(clean, "securityContext", "capabilities", "add"); len(got) != 3 {
		t.Errorf("clean-cilium-state capabilities %v", got)
	}
	for _, c := range containers(spec, "initContainers") {
		if c["name"] == "mount-cgroup" {
			t.Error("cgroup.autoMount.enabled=false still renders the mount-cgroup init container")
		}
	}
	if !hostPathMounted(spec, "/sys/fs/cgroup") {
		t.Error("cgroup.hostRoot /sys/fs/cgroup is not mounted")
	}
	cm := r.get(t, "ConfigMap", "kube-system", "cilium-config")
	data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
	for k, want := range map[string]string{"ipam": "kubernetes", "kube-proxy-replacement": "true", "routing-mode": "native",
		"ipv4-native-routing-cidr": "10.0.0.0/16", "cgroup-root": "/sys/fs/cgroup", "enable-hubble": "true"} {
		if data[k] != want {
			t.Errorf("cilium-config %s = %q, want %q", k, data[k], want)
		}
	}
	if _, tunnel := data["tunnel-protocol"]; tunnel {
		t.Error("native routing still sets tunnel-protocol")
	}
	op := r.get(t, "Deployment", "kube-system", "cilium-operator")
	if n := num(op.Object, "spec", "replicas"); n != 1 {
		t.Errorf("operator replicas %d, want 1", n)
	}
	if img := container(t, podSpec(t, op), "cilium-operator")["image"]; img != "quay.io/cilium/operator-generic:v1.19.6" {
		t.Errorf("operator image %v", img)
	}
	if !r.has("Deployment", "kube-system", "hubble-relay") {
		t.Error("hubble.relay.enabled=true renders no hubble-relay Deployment")
	}
	rules, _, _ := unstructured.NestedSlice(r.get(t, "ClusterRole", "", "cilium-operator").Object, "rules")
	if !strings.Contains(strings.Join(ruleResources(rules), ","), "secrets") {
		t.Error("the cilium-operator ClusterRole lacks secrets, which the upstream chart grants")
	}
}

func TestCiliumStandInKeepsUpstreamDefaultsAndRefusals(t *testing.T) {
	r := mustRender(t, "cilium", "cilium", "kube-system", nil)
	spec := podSpec(t, r.get(t, "DaemonSet", "kube-system", "cilium"))
	container(t, spec, "mount-cgroup") // cgroup.autoMount.enabled defaults to true
	if e := env(container(t, spec, "cilium-agent")); e["KUBERNETES_SERVICE_HOST"] != "" {
		t.Errorf("no k8sServiceHost still sets KUBERNETES_SERVICE_HOST=%s", e["KUBERNETES_SERVICE_HOST"])
	}
	data, _, _ := unstructured.NestedStringMap(r.get(t, "ConfigMap", "kube-system", "cilium-config").Object, "data")
	if data["ipam"] != "cluster-pool" || data["routing-mode"] != "tunnel" || data["tunnel-protocol"] != "vxlan" {
		t.Errorf("defaults %v", data)
	}
	if r.has("Deployment", "kube-system", "hubble-relay") {
		t.Error("hubble-relay rendered by default")
	}
	wg := mustRender(t, "cilium", "cilium", "kube-system", map[string]any{"encryption": map[string]any{"enabled": true, "type": "wireguard"}})
	if d, _, _ := unstructured.NestedString(wg.get(t, "ConfigMap", "kube-system", "cilium-config").Object, "data", "enable-wireguard"); d != "true" {
		t.Errorf("encryption.type=wireguard: enable-wireguard %q", d)
	}
	_, err := render(t, "cilium", "cilium", "kube-system", map[string]any{"hubble": map[string]any{"enabled": false, "relay": map[string]any{"enabled": true}}})
	if err == nil || !strings.Contains(err.Error(), "Hubble Relay requires .Values.hubble.enabled=true") {
		t.Errorf("relay without hubble: %v", err)
	}
}

func TestHCloudCCMStandInTakesItsTokenAndNetworkFromTheSecret(t *testing.T) {
	r := mustRender(t, "hcloud-cloud-controller-manager", "hcloud-cloud-controller-manager", "kube-system", map[string]any{
		"env": map[string]any{
			"HCLOUD_NETWORK_ROUTES_ENABLED":        map[string]any{"value": "true"},
			"ROBOT_ENABLED":                        map[string]any{"value": "false"},
			"HCLOUD_LOAD_BALANCERS_LOCATION":       map[string]any{"value": "nbg1"},
			"HCLOUD_LOAD_BALANCERS_USE_PRIVATE_IP": map[string]any{"value": "true"},
		},
		"networking":   map[string]any{"enabled": true, "clusterCIDR": "10.42.0.0/16"},
		"replicaCount": 1,
		"nodeSelector": map[string]any{"node-role.kubernetes.io/control-plane": ""},
	})
	dep := r.get(t, "Deployment", "kube-system", "hcloud-cloud-controller-manager")
	spec := podSpec(t, dep)
	c := container(t, spec, "hcloud-cloud-controller-manager")
	if c["image"] != "docker.io/hetznercloud/hcloud-cloud-controller-manager:v1.35.0" {
		t.Errorf("image %v", c["image"])
	}
	e := env(c)
	for k, want := range map[string]string{"HCLOUD_TOKEN": "secret hcloud/token", "HCLOUD_NETWORK": "secret hcloud/network",
		"HCLOUD_LOAD_BALANCERS_LOCATION": "nbg1", "HCLOUD_NETWORK_ROUTES_ENABLED": "true", "HCLOUD_LOAD_BALANCERS_USE_PRIVATE_IP": "true"} {
		if e[k] != want {
			t.Errorf("env %s = %q, want %q", k, e[k], want)
		}
	}
	args := strs(c["args"])
	for _, a := range []string{"--allocate-node-cidrs=true", "--cluster-cidr=10.42.0.0/16", "--leader-elect=false", "--cloud-provider=hcloud"} {
		if !contains(args, a) {
			t.Errorf("args %v lack %s", args, a)
		}
	}
	if spec["hostNetwork"] != true {
		t.Error("networking.enabled: the CCM is not on the host network")
	}
	// nodeSelector as upstream's chart/templates/deployment.yaml: the pod
	// spec's own, only when the value is set.
	if sel, _ := spec["nodeSelector"].(map[string]any); len(sel) != 1 || sel["node-role.kubernetes.io/control-plane"] != "" {
		t.Errorf("nodeSelector %v, want the control planes'", spec["nodeSelector"])
	}
	off := mustRender(t, "hcloud-cloud-controller-manager", "hcloud-cloud-controller-manager", "kube-system", map[string]any{"replicaCount": 2})
	c = container(t, podSpec(t, off.get(t, "Deployment", "kube-system", "hcloud-cloud-controller-manager")), "hcloud-cloud-controller-manager")
	if _, net := env(c)["HCLOUD_NETWORK"]; net || contains(strs(c["args"]), "--leader-elect=false") {
		t.Errorf("networking off, 2 replicas: env %v args %v", env(c), c["args"])
	}
	if sel, ok := podSpec(t, off.get(t, "Deployment", "kube-system", "hcloud-cloud-controller-manager"))["nodeSelector"]; ok {
		t.Errorf("no nodeSelector value: the pod spec has %v", sel)
	}
}

func TestHCloudCSIStandInRendersTheDriverAndStorageClasses(t *testing.T) {
	r := mustRender(t, "hcloud-csi", "hcloud-csi", "kube-system", map[string]any{
		"controller": map[string]any{
			"hcloudToken":       map[string]any{"existingSecret": map[string]any{"name": "hcloud", "key": "token"}},
			"volumeExtraLabels": map[string]any{"ohmytalos.io/cluster": "demo", "ohmytalos.io/cluster-id": "abc"},
		},
		"storageClasses": []any{map[string]any{"name": "hcloud-volumes", "defaultStorageClass": true, "reclaimPolicy": "Retain"}},
	})
	r.get(t, "CSIDriver", "", "csi.hetzner.cloud")
	sc := r.get(t, "StorageClass", "", "hcloud-volumes")
	if sc.Object["provisioner"] != "csi.hetzner.cloud" || sc.Object["reclaimPolicy"] != "Retain" ||
		sc.GetAnnotations()["storageclass.kubernetes.io/is-default-class"] != "true" {
		t.Errorf("StorageClass %v", sc.Object)
	}
	ctrl := container(t, podSpec(t, r.get(t, "Deployment", "kube-system", "hcloud-csi-controller")), "hcloud-csi-driver")
	if ctrl["image"] != "docker.io/hetznercloud/hcloud-csi-driver:v2.22.1" {
		t.Errorf("image %v", ctrl["image"])
	}
	e := env(ctrl)
	if e["HCLOUD_TOKEN"] != "secret hcloud/token" || e["HCLOUD_VOLUME_EXTRA_LABELS"] != "ohmytalos.io/cluster=demo,ohmytalos.io/cluster-id=abc" {
		t.Errorf("controller env %v", e)
	}
	node := container(t, podSpec(t, r.get(t, "DaemonSet", "kube-system", "hcloud-csi-node")), "hcloud-csi-driver")
	if _, tok := env(node)["HCLOUD_TOKEN"]; tok {
		t.Error("the node plugin got HCLOUD_TOKEN")
	}
}

func TestLonghornStandInHonoursItsValues(t *testing.T) {
	r := mustRender(t, "longhorn", "longhorn", "longhorn-system", map[string]any{
		"defaultSettings":   map[string]any{"defaultDataPath": "/var/lib/longhorn"},
		"persistence":       map[string]any{"defaultClass": false, "defaultClassReplicaCount": 2},
		"longhornUI":        map[string]any{"replicas": 1},
		"preUpgradeChecker": map[string]any{"jobEnabled": false},
	})
	crds := 0
	for k := range r.objs {
		if strings.HasPrefix(k, "CustomResourceDefinition ") && strings.HasSuffix(k, ".longhorn.io") {
			crds++
		}
	}
	if crds != 22 {
		t.Errorf("%d longhorn.io CRDs, want 22", crds)
	}
	if r.has("Namespace", "", "longhorn-system") {
		t.Error("the chart renders its namespace; ohmytalos applies it with PodSecurity labels")
	}
	mgr := container(t, podSpec(t, r.get(t, "DaemonSet", "longhorn-system", "longhorn-manager")), "longhorn-manager")
	if mgr["image"] != "longhornio/longhorn-manager:v1.10.1" {
		t.Errorf("manager image %v", mgr["image"])
	}
	set, _, _ := unstructured.NestedString(r.get(t, "ConfigMap", "longhorn-system", "longhorn-default-setting").Object, "data", "default-setting.yaml")
	if !strings.Contains(set, `default-data-path: "/var/lib/longhorn"`) {
		t.Errorf("default-setting.yaml %q", set)
	}
	sc, _, _ := unstructured.NestedString(r.get(t, "ConfigMap", "longhorn-system", "longhorn-storageclass").Object, "data", "storageclass.yaml")
	if !strings.Contains(sc, `is-default-class: "false"`) || !strings.Contains(sc, `numberOfReplicas: "2"`) {
		t.Errorf("storageclass.yaml %q", sc)
	}
	if n := num(r.get(t, "Deployment", "longhorn-system", "longhorn-ui").Object, "spec", "replicas"); n != 1 {
		t.Errorf("longhorn-ui replicas %d", n)
	}
	if r.has("Job", "longhorn-system", "longhorn-pre-upgrade") {
		t.Error("preUpgradeChecker.jobEnabled=false still renders the pre-upgrade Job")
	}
	if def := mustRender(t, "longhorn", "longhorn", "longhorn-system", nil); !def.has("Job", "longhorn-system", "longhorn-pre-upgrade") {
		t.Error("the pre-upgrade Job is missing by default")
	}
}

func TestMetricsServerStandInRegistersTheMetricsAPI(t *testing.T) {
	r := mustRender(t, "metrics-server", "metrics-server", "kube-system", map[string]any{"args": []any{"--kubelet-insecure-tls"}, "replicas": 2})
	api := r.get(t, "APIService", "", "v1beta1.metrics.k8s.io")
	svc, _, _ := unstructured.NestedMap(api.Object, "spec", "service")
	if svc["name"] != "metrics-server" || svc["namespace"] != "kube-system" {
		t.Errorf("APIService service %v", svc)
	}
	r.get(t, "Service", "kube-system", "metrics-server")
	dep := r.get(t, "Deployment", "kube-system", "metrics-server")
	if n := num(dep.Object, "spec", "replicas"); n != 2 {
		t.Errorf("replicas %d", n)
	}
	c := container(t, podSpec(t, dep), "metrics-server")
	if c["image"] != "registry.k8s.io/metrics-server/metrics-server:v0.8.0" || !contains(strs(c["args"]), "--kubelet-insecure-tls") {
		t.Errorf("container %v %v", c["image"], c["args"])
	}
}

func TestTraefikStandInExposesALoadBalancerWithTheAnnotations(t *testing.T) {
	ann := map[string]any{"load-balancer.hetzner.cloud/location": "nbg1", "load-balancer.hetzner.cloud/use-private-ip": "true",
		"load-balancer.hetzner.cloud/name": "demo-ingress"}
	r := mustRender(t, "traefik", "traefik", "traefik", map[string]any{
		"deployment": map[string]any{"kind": "DaemonSet"},
		"service": map[string]any{"annotations": ann, "spec": map[string]any{"type": "LoadBalancer",
			"ipFamilyPolicy": "PreferDualStack", "ipFamilies": []any{"IPv4", "IPv6"}}},
		"ports": map[string]any{"web": map[string]any{"nodePort": 30080}, "websecure": map[string]any{"nodePort": 30443}},
	})
	ds := r.get(t, "DaemonSet", "traefik", "traefik")
	if img := container(t, podSpec(t, ds), "traefik")["image"]; img != "docker.io/traefik:v3.7.13" {
		t.Errorf("image %v", img)
	}
	if r.has("Deployment", "traefik", "traefik") {
		t.Error("deployment.kind=DaemonSet still renders a Deployment")
	}
	svc := r.get(t, "Service", "traefik", "traefik")
	for k, v := range ann {
		if svc.GetAnnotations()[k] != v {
			t.Errorf("Service annotation %s = %q, want %q", k, svc.GetAnnotations()[k], v)
		}
	}
	spec, _, _ := unstructured.NestedMap(svc.Object, "spec")
	if spec["type"] != "LoadBalancer" || spec["ipFamilyPolicy"] != "PreferDualStack" || len(strs(spec["ipFamilies"])) != 2 {
		t.Errorf("Service spec %v", spec)
	}
	ports := map[string]string{}
	for _, p := range spec["ports"].([]any) {
		m := p.(map[string]any)
		ports[m["name"].(string)] = strings.Join([]string{str(m["port"]), str(m["nodePort"]), str(m["targetPort"])}, " ")
	}
	if ports["web"] != "80 30080 web" || ports["websecure"] != "443 30443 websecure" || len(ports) != 2 {
		t.Errorf("Service ports %v", ports)
	}
	if len(r.crds) != 10 {
		t.Errorf("%d CRDs in crds/, want 10", len(r.crds))
	}
	for _, crd := range r.crds {
		if typ, _, _ := unstructured.NestedString(crd.Object, "spec", "versions", "0", "schema", "openAPIV3Schema", "type"); crd.GetKind() != "CustomResourceDefinition" {
			t.Errorf("crds/ holds a %s (%s)", crd.GetKind(), typ)
		}
	}
	if _, err := render(t, "traefik", "traefik", "traefik", map[string]any{"deployment": map[string]any{"kind": "StatefulSet"}}); err == nil {
		t.Error("deployment.kind=StatefulSet renders")
	}
}

func hostPathMounted(spec map[string]any, p string) bool {
	for _, v := range containers(spec, "volumes") {
		if hp, _, _ := unstructured.NestedString(v, "hostPath", "path"); strings.TrimSuffix(hp, "/") == p {
			return true
		}
	}
	return false
}

func ruleResources(rules []any) []string {
	var out []string
	for _, r := range rules {
		out = append(out, strs(r.(map[string]any)["resources"])...)
	}
	return out
}

func str(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

// num is a number field, whichever type the decoder gave it.
func num(o map[string]any, fields ...string) int64 {
	v, _, _ := unstructured.NestedFieldNoCopy(o, fields...)
	switch x := v.(type) {
	case int64:
		return x
	case float64:
		return int64(x)
	}
	return -1
}
