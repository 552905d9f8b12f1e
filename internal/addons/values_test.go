package addons

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/charts"
	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// valueAt is the value ohmytalos sets at path, and whether it sets one.
func valueAt(vs []charts.Value, path string) (charts.Value, bool) {
	for _, v := range vs {
		if v.Path == path {
			return v, true
		}
	}
	return charts.Value{}, false
}

// wantValue fails unless vs sets path to want (compared as JSON).
func wantValue(t *testing.T, vs []charts.Value, path string, want any) {
	t.Helper()
	v, ok := valueAt(vs, path)
	if !ok {
		t.Fatalf("no value at %s", path)
	}
	got, _ := json.Marshal(v.Value)
	exp, _ := json.Marshal(want)
	if string(got) != string(exp) {
		t.Errorf("%s = %s, want %s", path, got, exp)
	}
}

func single(s *spec.Spec) { s.ControlPlane.Count = 1 }
func native(s *spec.Spec) { s.Network.NativeRouting = true; s.Network.Pods = "10.0.128.0/17" }
func storagePools(s *spec.Spec) {
	s.Pools = []spec.Pool{{Name: "worker", Count: 2, LoadBalancer: on(true)}, {Name: "storage", Count: 3, Storage: true, VolumeSize: 100}}
}

func TestValuesWellFormed(t *testing.T) {
	sp := testSpec(t, storagePools)
	in := Inputs{NetworkID: 42, Token: "hcloud-token-must-not-leak", ClusterID: "c0ffee"}
	for _, c := range Charts() {
		vs, err := Values(sp, in, c.Key)
		if err != nil {
			t.Fatal(err)
		}
		if len(vs) == 0 {
			t.Errorf("%s: no values", c.Addon)
		}
		seen := map[string]bool{}
		for _, v := range vs {
			if v.Path == "" || v.Why == "" || strings.Contains(v.Why, "\n") {
				t.Errorf("%s: value %q needs a path and a one-line why: %q", c.Addon, v.Path, v.Why)
			}
			if seen[v.Path] {
				t.Errorf("%s: %s set twice", c.Addon, v.Path)
			}
			seen[v.Path] = true
		}
		b, err := json.Marshal(vs)
		if err != nil {
			t.Fatalf("%s: values do not encode: %v", c.Addon, err)
		}
		if strings.Contains(string(b), in.Token) {
			t.Errorf("%s: the token is in the values", c.Addon)
		}
	}
	if _, err := Values(sp, in, "talos-backup"); err == nil {
		t.Error("talos-backup has no chart: want an error")
	}
}

func TestCiliumValues(t *testing.T) {
	tunnel := CiliumValues(testSpec(t, nil), Inputs{})
	wantValue(t, tunnel, "ipam.mode", "kubernetes")
	wantValue(t, tunnel, "kubeProxyReplacement", true)
	wantValue(t, tunnel, "k8sServiceHost", "localhost")
	wantValue(t, tunnel, "k8sServicePort", 7445)
	wantValue(t, tunnel, "securityContext.capabilities.ciliumAgent", talosAgentCaps)
	wantValue(t, tunnel, "securityContext.capabilities.cleanCiliumState", []string{"NET_ADMIN", "SYS_ADMIN", "SYS_RESOURCE"})
	wantValue(t, tunnel, "cgroup.autoMount.enabled", false)
	wantValue(t, tunnel, "cgroup.hostRoot", "/sys/fs/cgroup")
	wantValue(t, tunnel, "MTU", 1450)
	wantValue(t, tunnel, "routingMode", "tunnel")
	wantValue(t, tunnel, "tunnelProtocol", "vxlan")
	wantValue(t, tunnel, "operator.replicas", 2)
	if _, ok := valueAt(tunnel, "ipv4NativeRoutingCIDR"); ok {
		t.Error("a tunnel needs no native routing range")
	}
	for _, p := range []string{"ipam.mode", "k8sServiceHost", "k8sServicePort", "cgroup.autoMount.enabled", "securityContext.capabilities.ciliumAgent"} {
		if v, _ := valueAt(tunnel, p); !v.Required {
			t.Errorf("%s must be required on Talos", p)
		}
	}
	for _, c := range talosAgentCaps {
		if c == "SYS_MODULE" {
			t.Error("Talos grants no SYS_MODULE")
		}
	}

	nat := CiliumValues(testSpec(t, func(s *spec.Spec) { native(s); single(s) }), Inputs{})
	wantValue(t, nat, "routingMode", "native")
	wantValue(t, nat, "ipv4NativeRoutingCIDR", "10.0.0.0/16")
	wantValue(t, nat, "operator.replicas", 1)
	if _, ok := valueAt(nat, "tunnelProtocol"); ok {
		t.Error("native routing sets no tunnel protocol")
	}
}

func TestHCloudCCMValues(t *testing.T) {
	tunnel := HCloudCCMValues(testSpec(t, nil), Inputs{})
	wantValue(t, tunnel, "env.HCLOUD_TOKEN", map[string]any{"valueFrom": map[string]any{"secretKeyRef": map[string]any{"name": "hcloud", "key": "token"}}})
	wantValue(t, tunnel, "networking.enabled", true)
	wantValue(t, tunnel, "networking.clusterCIDR", "10.42.0.0/16")
	wantValue(t, tunnel, "env.HCLOUD_NETWORK_ROUTES_ENABLED", map[string]any{"value": "false"})
	wantValue(t, tunnel, "env.ROBOT_ENABLED", map[string]any{"value": "false"})
	wantValue(t, tunnel, "env.HCLOUD_LOAD_BALANCERS_LOCATION", map[string]any{"value": "nbg1"})
	wantValue(t, tunnel, "env.HCLOUD_LOAD_BALANCERS_USE_PRIVATE_IP", map[string]any{"value": "true"})
	wantValue(t, tunnel, "env.KUBERNETES_SERVICE_HOST", map[string]any{"value": "localhost"})
	wantValue(t, tunnel, "env.KUBERNETES_SERVICE_PORT", map[string]any{"value": "7445"})
	wantValue(t, tunnel, "replicaCount", 1)
	// On the control planes, as the typed objects pinned it: on a worker,
	// losing it leaves that Node in the cluster for five minutes.
	wantValue(t, tunnel, "nodeSelector", map[string]any{"node-role.kubernetes.io/control-plane": ""})
	// A string: the chart's args loop drops "=VALUE" for a false bool,
	// which would switch the route controller on.
	wantValue(t, tunnel, "args.configure-cloud-routes", "false")

	nat := HCloudCCMValues(testSpec(t, func(s *spec.Spec) { native(s); s.Location = "fsn1" }), Inputs{})
	wantValue(t, nat, "env.HCLOUD_NETWORK_ROUTES_ENABLED", map[string]any{"value": "true"})
	wantValue(t, nat, "env.HCLOUD_LOAD_BALANCERS_LOCATION", map[string]any{"value": "fsn1"})
	if _, ok := valueAt(nat, "args.configure-cloud-routes"); ok {
		t.Error("native routing keeps the route controller")
	}
	if _, ok := valueAt(nat, "env.HCLOUD_NETWORK"); ok {
		t.Error("the chart reads HCLOUD_NETWORK itself (networking.network)")
	}
}

func TestHCloudCSIValues(t *testing.T) {
	sp := testSpec(t, nil)
	vs := HCloudCSIValues(sp, Inputs{ClusterID: "c0ffee"})
	wantValue(t, vs, "controller.hcloudToken.existingSecret.name", "hcloud")
	wantValue(t, vs, "controller.hcloudToken.existingSecret.key", "token")
	labels := map[string]any{cloud.LabelCluster: "demo", cloud.LabelClusterID: "c0ffee"}
	wantValue(t, vs, "controller.volumeExtraLabels", labels)
	// The chart joins the map as k=v,... in key order (Go templates range
	// over sorted keys): the typed renderer's HCLOUD_VOLUME_EXTRA_LABELS.
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var pairs []string
	for _, k := range keys {
		pairs = append(pairs, k+"="+labels[k].(string))
	}
	if got, want := strings.Join(pairs, ","), CSIVolumeLabels(sp.Name, "c0ffee"); got != want {
		t.Errorf("chart labels join to %s, typed renderer sets %s", got, want)
	}
	wantValue(t, vs, "storageClasses", []any{map[string]any{"name": "hcloud-volumes", "defaultStorageClass": true, "reclaimPolicy": "Delete"}})
	noID := HCloudCSIValues(sp, Inputs{})
	wantValue(t, noID, "controller.volumeExtraLabels", map[string]any{cloud.LabelCluster: "demo"})
}

func TestLonghornValues(t *testing.T) {
	vs := LonghornValues(testSpec(t, storagePools), Inputs{})
	wantValue(t, vs, "defaultSettings.createDefaultDiskLabeledNodes", true)
	wantValue(t, vs, "defaultSettings.defaultDataPath", "/var/lib/longhorn")
	wantValue(t, vs, "persistence.defaultClass", false)
	wantValue(t, vs, "persistence.defaultClassReplicaCount", 3)
	wantValue(t, vs, "longhornUI.replicas", 2)
	one := LonghornValues(testSpec(t, func(s *spec.Spec) {
		s.Pools = []spec.Pool{{Name: "storage", Count: 1, Storage: true, VolumeSize: 100}}
	}), Inputs{})
	wantValue(t, one, "persistence.defaultClassReplicaCount", 1)
	wantValue(t, one, "longhornUI.replicas", 1)
}

func TestMetricsServerValues(t *testing.T) {
	ha := MetricsServerValues(testSpec(t, nil), Inputs{})
	wantValue(t, ha, "args", []string{"--kubelet-insecure-tls"})
	wantValue(t, ha, "replicas", 2)
	wantValue(t, MetricsServerValues(testSpec(t, single), Inputs{}), "replicas", 1)
}

func TestTraefikValues(t *testing.T) {
	sp := testSpec(t, func(s *spec.Spec) {
		storagePools(s)
		s.Domains = []string{"example.com"}
	})
	vs := TraefikValues(sp, Inputs{IngressLBIPv6: "2001:db8::1"})
	wantValue(t, vs, "deployment.kind", "Deployment")
	wantValue(t, vs, "deployment.replicas", 2)
	wantValue(t, vs, "service.spec.type", "LoadBalancer")
	wantValue(t, vs, "service.annotations", map[string]any{
		"load-balancer.hetzner.cloud/name":           "demo-ingress",
		"load-balancer.hetzner.cloud/location":       "nbg1",
		"load-balancer.hetzner.cloud/type":           "lb11",
		"load-balancer.hetzner.cloud/use-private-ip": "true",
		"load-balancer.hetzner.cloud/ipv6-disabled":  "false",
	})
	wantValue(t, vs, "service.spec.ipFamilyPolicy", "PreferDualStack")
	wantValue(t, vs, "service.spec.ipFamilies", []string{"IPv4", "IPv6"})

	// Without the load balancer's IPv6 (or without domains) the ingress is
	// IPv4 only: no AAAA record can point where nothing listens.
	v4 := TraefikValues(testSpec(t, func(s *spec.Spec) {
		storagePools(s)
		s.LoadBalancer = spec.LoadBalancer{Type: "lb21", Location: "fsn1"}
	}), Inputs{IngressLBIPv6: "2001:db8::1"})
	ann, _ := valueAt(v4, "service.annotations")
	m := ann.Value.(map[string]any)
	if m["load-balancer.hetzner.cloud/ipv6-disabled"] != "true" || m["load-balancer.hetzner.cloud/location"] != "fsn1" || m["load-balancer.hetzner.cloud/type"] != "lb21" {
		t.Errorf("IPv4-only annotations = %v", m)
	}
	wantValue(t, v4, "service.spec.ipFamilyPolicy", "SingleStack")
	wantValue(t, v4, "service.spec.ipFamilies", []string{"IPv4"})
}

func TestChartsPins(t *testing.T) {
	reserved := map[string]bool{}
	for _, n := range spec.ReservedReleaseNames() {
		reserved[n] = true
	}
	for _, n := range Names() {
		if !reserved[n] {
			t.Errorf("add-on %s is not reserved from addons.extra", n)
		}
	}
	defaults := map[string]string{}
	for _, v := range spec.DefaultAddonVersions() {
		defaults[v.Key] = v.Version
	}
	defaults["ingress"] = "v3.7.13"
	for _, c := range Charts() {
		r := c.Ref
		if !strings.HasPrefix(r.Repository, "https://") || r.Name == "" || r.Version == "" {
			t.Errorf("%s: incomplete pin %+v", c.Addon, r)
		}
		if len(r.Digest) != len("sha256:")+64 || !strings.HasPrefix(r.Digest, "sha256:") || r.Digest != c.Digests[r.Version] {
			t.Errorf("%s: digest %q is not the pinned version's", c.Addon, r.Digest)
		}
		if v, ok := spec.ChartVersion(c.Key, defaults[c.Key]); !ok || v != r.Version {
			t.Errorf("%s: default release %s maps to chart %q, pinned %s", c.Addon, defaults[c.Key], v, r.Version)
		}
		if !reserved[c.Release.Name] || !reserved[c.Addon] {
			t.Errorf("%s: release %s is not reserved from addons.extra", c.Addon, c.Release.Name)
		}
		for _, name := range []string{c.Addon, c.Key, c.Release.Name} {
			if got, ok := ChartOf(name); !ok || got.Addon != c.Addon {
				t.Errorf("ChartOf(%s) = %v, %v", name, got.Addon, ok)
			}
		}
	}
}

func TestChartRef(t *testing.T) {
	pinned := func(name string) charts.Ref { c, _ := ChartOf(name); return c.Ref }
	cases := []struct {
		name   string
		addon  string
		mutate func(*spec.Spec)
		want   charts.Ref
	}{
		{"the pin", "cilium", nil, pinned("cilium")},
		{"another release: no known digest", "cilium", func(s *spec.Spec) { s.Addons.Cilium.Version = "v1.19.5" },
			charts.Ref{Repository: "https://helm.cilium.io/", Name: "cilium", Version: "1.19.5"}},
		{"a known metrics-server release keeps its digest", "metricsServer", func(s *spec.Spec) { s.Addons.MetricsServer.Version = "v0.8.1" },
			charts.Ref{Repository: "https://kubernetes-sigs.github.io/metrics-server/", Name: "metrics-server", Version: "3.13.1",
				Digest: "sha256:084e6edb680cf4e2acc30bd496568c53fdf663cbacf6e17876b25785c35b7a13"}},
		{"a mirror keeps the pinned digest", "hcloudCSI", func(s *spec.Spec) {
			s.Addons.HCloudCSI.Chart = &charts.Ref{Repository: "https://mirror.example.com/hetzner"}
		},
			charts.Ref{Repository: "https://mirror.example.com/hetzner", Name: "hcloud-csi", Version: "2.22.1", Digest: pinned("hcloudCSI").Digest}},
		{"chart.version drops it", "longhorn", func(s *spec.Spec) { s.Addons.Longhorn.Chart = &charts.Ref{Version: "1.10.2"} },
			charts.Ref{Repository: "https://charts.longhorn.io", Name: "longhorn", Version: "1.10.2"}},
		{"the operator's digest wins", "longhorn", func(s *spec.Spec) {
			s.Addons.Longhorn.Chart = &charts.Ref{Version: "1.10.2", Digest: "sha256:" + strings.Repeat("0", 64)}
		}, charts.Ref{Repository: "https://charts.longhorn.io", Name: "longhorn", Version: "1.10.2", Digest: "sha256:" + strings.Repeat("0", 64)}},
		{"a path drops it: the operator's own chart", "cilium", func(s *spec.Spec) { s.Addons.Cilium.Chart = &charts.Ref{Path: "/charts/cilium"} },
			charts.Ref{Repository: "https://helm.cilium.io/", Name: "cilium", Version: "1.19.6", Path: "/charts/cilium"}},
		{"a path keeps the operator's digest", "cilium", func(s *spec.Spec) {
			s.Addons.Cilium.Chart = &charts.Ref{Path: "/charts/cilium.tgz", Digest: "sha256:" + strings.Repeat("1", 64)}
		}, charts.Ref{Repository: "https://helm.cilium.io/", Name: "cilium", Version: "1.19.6", Path: "/charts/cilium.tgz", Digest: "sha256:" + strings.Repeat("1", 64)}},
		{"the ingress pin", "ingress", nil, pinned("ingress")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ChartRef(testSpec(t, c.mutate), c.addon)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("ChartRef = %+v, want %+v", got, c.want)
			}
		})
	}
	if _, err := ChartRef(testSpec(t, nil), "talos-backup"); err == nil {
		t.Error("talos-backup has no chart: want an error")
	}
}
