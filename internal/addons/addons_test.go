package addons

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/spec"
)

func testSpec(t *testing.T, mutate func(*spec.Spec)) *spec.Spec {
	t.Helper()
	s := &spec.Spec{Name: "demo"}
	if mutate != nil {
		mutate(s)
	}
	s.Default()
	if ps := s.Validate(); len(ps) > 0 {
		t.Fatalf("test spec invalid: %v", ps)
	}
	return s
}

func on(b bool) *bool { return &b }

// find returns the rendered object of a kind and name.
func find(t *testing.T, as []Addon, kind, name string) Object {
	t.Helper()
	for _, a := range as {
		for _, o := range a.Objects {
			if o.Kind() == kind && o.Name() == name {
				return o
			}
		}
	}
	t.Fatalf("no %s %s rendered", kind, name)
	return nil
}

// dig walks maps by key and lists by "name" fields or indexes.
func dig(v any, path ...string) any {
	for _, p := range path {
		switch x := v.(type) {
		case map[string]any:
			v = x[p]
		case Object:
			v = x[p]
		case []any:
			var next any
			for _, it := range x {
				if mm, ok := it.(map[string]any); ok && mm["name"] == p {
					next = it
				}
			}
			v = next
		default:
			return nil
		}
	}
	return v
}

func names(as []Addon) string {
	var out []string
	for _, a := range as {
		out = append(out, a.Name)
	}
	return strings.Join(out, ",")
}

func TestRenderSelectsAddons(t *testing.T) {
	storage := func(s *spec.Spec) {
		s.Pools = []spec.Pool{{Name: "worker", Count: 2}, {Name: "storage", Count: 3, Storage: true, VolumeSize: 100}}
	}
	cases := []struct {
		name   string
		mutate func(*spec.Spec)
		want   string
	}{
		{"defaults", nil, "hcloud-secret,cilium,hcloud-ccm,hcloud-csi,ingress"},
		{"ingress switched off", func(s *spec.Spec) { s.Addons.Ingress.Enabled = on(false) }, "hcloud-secret,cilium,hcloud-ccm,hcloud-csi"},
		{"storage pool turns Longhorn on", storage, "hcloud-secret,cilium,hcloud-ccm,hcloud-csi,longhorn,ingress"},
		{"Longhorn switched off", func(s *spec.Spec) { storage(s); s.Addons.Longhorn.Enabled = on(false) }, "hcloud-secret,cilium,hcloud-ccm,hcloud-csi,ingress"},
		{"metrics-server on", func(s *spec.Spec) { s.Addons.MetricsServer.Enabled = on(true) }, "hcloud-secret,cilium,hcloud-ccm,hcloud-csi,metrics-server,ingress"},
		{"own CNI", func(s *spec.Spec) { s.Addons.Cilium.Enabled = on(false) }, "hcloud-secret,hcloud-ccm,hcloud-csi,ingress"},
		{"no Hetzner add-ons", func(s *spec.Spec) { s.Addons.HCloudCCM.Enabled = on(false); s.Addons.HCloudCSI.Enabled = on(false) }, "cilium"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			as, err := Render(testSpec(t, c.mutate), Inputs{NetworkID: 42, Token: "tok"})
			if err != nil {
				t.Fatal(err)
			}
			if got := names(as); got != c.want {
				t.Fatalf("add-ons = %s, want %s", got, c.want)
			}
			for _, a := range as {
				for _, o := range a.Objects {
					lb, _ := dig(o, "metadata", "labels").(map[string]any)
					if lb[LabelManagedBy] != ManagedBy || lb[LabelAddon] != a.Name {
						t.Errorf("%s lacks the managed-by/add-on labels: %v", o.Ref(), lb)
					}
				}
			}
		})
	}
}

func TestCiliumForTalos(t *testing.T) {
	cases := []struct {
		name        string
		native      bool
		wantRouting string
		wantCIDR    any
	}{
		{"tunnel", false, "tunnel", nil},
		{"native routing", true, "native", "10.0.0.0/16"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sp := testSpec(t, func(s *spec.Spec) {
				if c.native {
					s.Network.NativeRouting = true
					s.Network.Pods = "10.0.128.0/17"
				}
			})
			as, err := Render(sp, Inputs{NetworkID: 1, Token: "t"})
			if err != nil {
				t.Fatal(err)
			}
			cm := find(t, as, "ConfigMap", "cilium-config")
			data := cm["data"].(map[string]any)
			for k, want := range map[string]any{"routing-mode": c.wantRouting, "ipv4-native-routing-cidr": c.wantCIDR, "ipam": "kubernetes",
				"kube-proxy-replacement": "true", "cgroup-root": "/sys/fs/cgroup", "mtu": "1450"} {
				if data[k] != want {
					t.Errorf("cilium-config %s = %v, want %v", k, data[k], want)
				}
			}
			ds := find(t, as, "DaemonSet", "cilium")
			pod := dig(ds, "spec", "template", "spec")
			agent := dig(pod, "containers", "cilium-agent")
			addCaps := dig(agent, "securityContext", "capabilities", "add").([]any)
			if len(addCaps) != len(talosAgentCaps) || strings.Contains(strings.Join(toStrings(addCaps), ","), "SYS_MODULE") {
				t.Errorf("agent caps = %v", addCaps)
			}
			if h := dig(agent, "env", "KUBERNETES_SERVICE_HOST", "value"); h != "localhost" {
				t.Errorf("KUBERNETES_SERVICE_HOST = %v", h)
			}
			if p := dig(agent, "env", "KUBERNETES_SERVICE_PORT", "value"); p != "7445" {
				t.Errorf("KUBERNETES_SERVICE_PORT = %v", p)
			}
			if dig(pod, "initContainers", "mount-cgroup") != nil {
				t.Error("mount-cgroup init container rendered: cgroup auto-mount must be off on Talos")
			}
			if p := dig(pod, "volumes", "etc-cni-netd", "hostPath", "path"); p != "/etc/cni/net.d" {
				t.Errorf("agent does not mount hostPath /etc/cni/net.d: %v", p)
			}
			if sel := dig(find(t, as, "Deployment", "cilium-operator"), "spec", "template", "spec", "nodeSelector"); sel == nil {
				t.Error("operator is not pinned to control planes")
			}
			ccm := find(t, as, "Deployment", "hcloud-cloud-controller-manager")
			ctr := dig(ccm, "spec", "template", "spec", "containers", "hcloud-cloud-controller-manager")
			routes := dig(ctr, "env", "HCLOUD_NETWORK_ROUTES_ENABLED", "value")
			if want := map[bool]string{true: "true", false: "false"}[c.native]; routes != want {
				t.Errorf("HCLOUD_NETWORK_ROUTES_ENABLED = %v, want %s", routes, want)
			}
		})
	}
}

func toStrings(v []any) []string {
	out := make([]string, len(v))
	for i, x := range v {
		out[i], _ = x.(string)
	}
	return out
}

func TestHetznerAddons(t *testing.T) {
	as, err := Render(testSpec(t, nil), Inputs{NetworkID: 4711, Token: "s3cret", ClusterID: "0123456789abcdef0123456789abcdef"})
	if err != nil {
		t.Fatal(err)
	}
	sec := find(t, as, "Secret", "hcloud")
	if d := sec["stringData"].(map[string]any); d["token"] != "s3cret" || d["network"] != "4711" {
		t.Errorf("secret data = %v", d)
	}
	ccm := find(t, as, "Deployment", "hcloud-cloud-controller-manager")
	pod := dig(ccm, "spec", "template", "spec")
	ctr := dig(pod, "containers", "hcloud-cloud-controller-manager")
	checks := []struct {
		what string
		got  any
		want any
	}{
		{"ccm image", dig(ctr, "image"), "docker.io/hetznercloud/hcloud-cloud-controller-manager:" + spec.DefaultHCloudCCMVersion},
		{"HCLOUD_TOKEN", dig(ctr, "env", "HCLOUD_TOKEN", "valueFrom", "secretKeyRef", "key"), "token"},
		{"HCLOUD_NETWORK", dig(ctr, "env", "HCLOUD_NETWORK", "valueFrom", "secretKeyRef", "key"), "network"},
		{"ccm KUBERNETES_SERVICE_PORT", dig(ctr, "env", "KUBERNETES_SERVICE_PORT", "value"), "7445"},
		{"ccm hostNetwork", dig(pod, "hostNetwork"), true},
		{"csi image", dig(find(t, as, "Deployment", "hcloud-csi-controller"), "spec", "template", "spec", "containers", "hcloud-csi-driver", "image"),
			"docker.io/hetznercloud/hcloud-csi-driver:" + spec.DefaultHCloudCSIVersion},
		{"csi volume labels", dig(find(t, as, "Deployment", "hcloud-csi-controller"), "spec", "template", "spec", "containers", "hcloud-csi-driver", "env", "HCLOUD_VOLUME_EXTRA_LABELS", "value"),
			"ohmytalos.io/cluster=" + testSpec(t, nil).Name + ",ohmytalos.io/cluster-id=0123456789abcdef0123456789abcdef"},
		{"default storage class", dig(find(t, as, "StorageClass", "hcloud-volumes"), "metadata", "annotations", "storageclass.kubernetes.io/is-default-class"), "true"},
		{"csi driver", find(t, as, "CSIDriver", "csi.hetzner.cloud").Name(), "csi.hetzner.cloud"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
	tolerated := false
	for _, tol := range dig(pod, "tolerations").([]any) {
		if tol.(map[string]any)["key"] == "node.cloudprovider.kubernetes.io/uninitialized" {
			tolerated = true
		}
	}
	if !tolerated {
		t.Error("the CCM does not tolerate the uninitialized taint it removes")
	}
	if !strings.Contains(strings.Join(toStrings(dig(ctr, "args").([]any)), " "), "--cluster-cidr=10.42.0.0/16") {
		t.Error("the CCM lacks the cluster CIDR")
	}
}

func TestManifestDeterministicAndRedacted(t *testing.T) {
	sp := testSpec(t, func(s *spec.Spec) {
		s.Pools = []spec.Pool{{Name: "storage", Count: 3, Storage: true}}
		s.Addons.MetricsServer.Enabled = on(true)
	})
	render := func() map[string][]byte {
		as, err := Render(sp, Inputs{NetworkID: 7, Token: "very-secret-token"})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string][]byte{}
		for _, a := range as {
			b, err := Manifest(a, true)
			if err != nil {
				t.Fatal(err)
			}
			out[a.Name] = b
		}
		return out
	}
	first, second := render(), render()
	total := 0
	for name, b := range first {
		if !bytes.Equal(b, second[name]) {
			t.Errorf("%s renders differently on a second run", name)
		}
		if bytes.Contains(b, []byte("very-secret-token")) {
			t.Errorf("%s: redacted manifest holds the token", name)
		}
		total += len(b)
		t.Logf("%s: %d bytes, %d documents", name, len(b), bytes.Count(b, []byte("\n---\n"))+1)
	}
	if !bytes.Contains(first[HCloudSecret], []byte(Redacted)) {
		t.Error("the Secret is not marked REDACTED")
	}
	// Size: the manifests are applied over the Kubernetes API, never put
	// into user_data (32 KiB); they stay small enough to review.
	if total > 96<<10 {
		t.Errorf("manifests total %d bytes, want under 96 KiB", total)
	}
	t.Logf("total %d bytes", total)
}

func TestObjectJSONIsApplyBody(t *testing.T) {
	as, err := Render(testSpec(t, nil), Inputs{NetworkID: 1, Token: "t"})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range as {
		for _, o := range a.Objects {
			b, err := o.JSON()
			if err != nil {
				t.Fatal(err)
			}
			var back map[string]any
			if err := json.Unmarshal(b, &back); err != nil || back["kind"] != o.Kind() || o.APIVersion() == "" || o.Name() == "" {
				t.Errorf("%s: bad apply body: %v", o.Ref(), err)
			}
		}
	}
}

func TestPruning(t *testing.T) {
	kinds := PrunableKinds()
	var have []string
	for _, k := range kinds {
		have = append(have, k.APIVersion+" "+k.Kind)
		if neverPruned[k.Kind] {
			t.Errorf("%s is listed for pruning", k.Kind)
		}
	}
	for _, want := range []string{"apps/v1 DaemonSet", "apps/v1 Deployment", "v1 Secret", "storage.k8s.io/v1 StorageClass", "apiregistration.k8s.io/v1 APIService"} {
		if !strings.Contains(strings.Join(have, ","), want) {
			t.Errorf("prunable kinds lack %s: %v", want, have)
		}
	}
	desired := map[string]bool{"DaemonSet/kube-system/cilium": true}
	cases := []struct {
		kind, ref string
		want      bool
	}{
		{"DaemonSet", "DaemonSet/kube-system/cilium", false},
		{"Deployment", "Deployment/kube-system/metrics-server", true},
		{"CustomResourceDefinition", "CustomResourceDefinition/volumes.longhorn.io", false},
		{"Namespace", "Namespace/longhorn-system", false},
	}
	for _, c := range cases {
		if got := Prunable(c.kind, c.ref, desired); got != c.want {
			t.Errorf("Prunable(%s) = %t, want %t", c.ref, got, c.want)
		}
	}
}

// An add-on that comes from no chart is refused by ChartRef and Values
// alike, naming every add-on that does.
func TestUnknownChartAddonNamesTheChoices(t *testing.T) {
	sp := testSpec(t, nil)
	_, refErr := ChartRef(sp, "nope")
	_, valErr := Values(sp, Inputs{}, "nope")
	for _, err := range []error{refErr, valErr} {
		if err == nil || err.Error() != `add-on "nope" comes from no chart: use one of cilium, hcloudCCM, hcloudCSI, longhorn, metricsServer, ingress` {
			t.Errorf("err = %v", err)
		}
	}
}
