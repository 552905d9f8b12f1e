package talos

import (
	"bytes"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"testing"

	blockpb "github.com/siderolabs/talos/pkg/machinery/api/resource/definitions/block"
	"github.com/siderolabs/talos/pkg/machinery/cel/celenv"
	"github.com/siderolabs/talos/pkg/machinery/config/types/block"
	"github.com/siderolabs/talos/pkg/machinery/config/types/network"
	"github.com/siderolabs/talos/pkg/machinery/config/types/runtime/extensions"
	blockres "github.com/siderolabs/talos/pkg/machinery/resources/block"
)

func TestRenderDeterministic(t *testing.T) {
	data, err := testBundleBytes()
	if err != nil {
		t.Fatal(err)
	}

	for _, g := range []NodeGroup{controlPlaneGroup(), workerGroup(), storageGroup()} {
		// Two independent loads, as two runs of ohmytalos would do.
		var outs [2][]byte

		for i := range outs {
			b, err := LoadBundle(data)
			if err != nil {
				t.Fatal(err)
			}

			r, err := Render(b, testCluster(), g)
			if err != nil {
				t.Fatalf("Render(%s): %v", g.Pool, err)
			}

			outs[i] = r.Config
		}

		if !bytes.Equal(outs[0], outs[1]) {
			t.Errorf("pool %s: two renders from the same bundle and inputs differ", g.Pool)
		}
	}
}

// assertCommon checks the field-notes settings every node carries.
func assertCommon(t *testing.T, d decoded) {
	t.Helper()

	cl, mc := d.v1.ClusterConfig, d.v1.MachineConfig

	if got := cl.ClusterNetwork.CNI.CNIName; got != "none" {
		t.Errorf("cluster.network.cni.name = %q, want none", got)
	}

	if !slices.Equal(cl.ClusterNetwork.PodSubnet, []string{"10.42.0.0/16"}) || !slices.Equal(cl.ClusterNetwork.ServiceSubnet, []string{"10.43.0.0/16"}) {
		t.Errorf("pod/service subnets = %v / %v", cl.ClusterNetwork.PodSubnet, cl.ClusterNetwork.ServiceSubnet)
	}

	if cl.ProxyConfig == nil || cl.ProxyConfig.Disabled == nil || !*cl.ProxyConfig.Disabled {
		t.Error("cluster.proxy.disabled is not true")
	}

	if !d.v1.Cluster().ExternalCloudProvider().Enabled() {
		t.Error("cluster.externalCloudProvider.enabled is not true")
	}

	if got := cl.ControlPlane.Endpoint.URL.String(); got != "https://10.0.1.100:6443" {
		t.Errorf("cluster.controlPlane.endpoint = %q", got)
	}

	kp := d.v1.Machine().Features().KubePrism()
	if !kp.Enabled() || kp.Port() != 7445 {
		t.Errorf("kubePrism enabled=%t port=%d, want true 7445", kp.Enabled(), kp.Port())
	}

	if mc.MachineInstall.InstallImage != testInstaller || mc.MachineInstall.InstallDisk != "/dev/sda" {
		t.Errorf("install image/disk = %q %q", mc.MachineInstall.InstallImage, mc.MachineInstall.InstallDisk)
	}

	// The "v" of v1.36.1 is stripped, not doubled.
	if got := mc.MachineKubelet.KubeletImage; got != "ghcr.io/siderolabs/kubelet:v1.36.1" {
		t.Errorf("kubelet image = %q", got)
	}

	if got := mc.MachineKubelet.KubeletNodeIP.KubeletNodeIPValidSubnets; !slices.Equal(got, []string{"10.0.0.0/16", "!10.0.1.100/32"}) {
		t.Errorf("kubelet validSubnets = %v", got)
	}

	// STATE: nodeID key, slot 0, not locked to itself.
	// EPHEMERAL: the static passphrase, locked to STATE.
	vols := map[string]*block.VolumeConfigV1Alpha1{}
	for _, v := range find[*block.VolumeConfigV1Alpha1](d) {
		vols[v.Name()] = v
	}

	state, eph := vols["STATE"], vols["EPHEMERAL"]
	if state == nil || eph == nil {
		t.Fatalf("want STATE and EPHEMERAL VolumeConfigs, got %v", slices.Collect(maps.Keys(vols)))
	}

	if k := state.EncryptionSpec.EncryptionKeys; state.EncryptionSpec.EncryptionProvider != blockres.EncryptionProviderLUKS2 ||
		len(k) != 1 || k[0].KeySlot != 0 || k[0].KeyNodeID == nil || k[0].KeyStatic != nil || k[0].KeyLockToSTATE != nil {
		t.Errorf("STATE encryption = %+v", state.EncryptionSpec)
	}

	assertStaticLocked(t, "EPHEMERAL", eph.EncryptionSpec)
}

func assertStaticLocked(t *testing.T, name string, spec block.EncryptionSpec) {
	t.Helper()

	k := spec.EncryptionKeys
	if spec.EncryptionProvider != blockres.EncryptionProviderLUKS2 || len(k) != 1 || k[0].KeyStatic == nil ||
		k[0].KeyStatic.KeyData != testPassphrase || k[0].KeyLockToSTATE == nil || !*k[0].KeyLockToSTATE {
		t.Errorf("%s encryption is not the static passphrase locked to STATE: %+v", name, spec)
	}
}

func TestRenderControlPlane(t *testing.T) {
	r, d := render(t, testBundle(t), testCluster(), controlPlaneGroup())
	assertCommon(t, d)

	t.Logf("control plane config: %d bytes", r.Size)

	if r.Size >= UserDataLimit {
		t.Errorf("control plane config is %d bytes, not under %d", r.Size, UserDataLimit)
	}

	if !d.v1.Machine().Type().IsControlPlane() {
		t.Errorf("machine type = %v", d.v1.Machine().Type())
	}

	if got := d.v1.ClusterConfig.EtcdConfig.EtcdAdvertisedSubnets; !slices.Equal(got, []string{"10.0.0.0/16", "!10.0.1.100/32"}) {
		t.Errorf("etcd advertisedSubnets = %v", got)
	}

	for _, san := range []string{"k8s.example.com", "10.0.1.100"} {
		if !slices.Contains(d.v1.ClusterConfig.APIServerConfig.CertSANs, san) {
			t.Errorf("API server certSANs %v lack %s", d.v1.ClusterConfig.APIServerConfig.CertSANs, san)
		}
	}

	// Talos' own label keeps control planes out of load balancers; no Longhorn.
	labels := d.v1.MachineConfig.MachineNodeLabels
	if v, ok := labels[LabelExcludeFromExternalLB]; !ok || v != "" {
		t.Errorf("control plane labels = %v, want Talos' exclude label", labels)
	}

	if _, ok := labels[LabelLonghornCreateDefaultDisk]; ok || len(d.v1.MachineConfig.MachineNodeAnnotations) > 0 {
		t.Error("control plane carries Longhorn settings")
	}

	vips := find[*network.HCloudVIPConfigV1Alpha1](d)
	if len(vips) != 1 || vips[0].VIP().String() != "10.0.1.100" || vips[0].Link() != "eth1" || vips[0].HCloudAPIToken() != testHCloudToken {
		t.Fatalf("HCloudVIPConfig = %+v", vips)
	}

	svcs := find[*extensions.ServiceConfigV1Alpha1](d)
	if len(svcs) != 1 || svcs[0].Name() != "tailscale" || !slices.Contains(svcs[0].Environment(), "TS_AUTHKEY="+testTSKey) {
		t.Fatalf("tailscale ExtensionServiceConfig = %+v", svcs)
	}

	if len(find[*block.UserVolumeConfigV1Alpha1](d)) != 0 {
		t.Error("control plane without a volume has a UserVolumeConfig")
	}
}

func TestRenderControlPlaneOptionalDocs(t *testing.T) {
	c := testCluster()
	c.VIP, c.HCloudToken, c.TailscaleAuthKey = "", "", ""
	c.Endpoint = "203.0.113.10" // a load balancer

	_, d := render(t, testBundle(t), c, controlPlaneGroup())

	if n := len(find[*network.HCloudVIPConfigV1Alpha1](d)); n != 0 {
		t.Errorf("%d VIP documents without a VIP", n)
	}

	if n := len(find[*extensions.ServiceConfigV1Alpha1](d)); n != 0 {
		t.Errorf("%d extension services without a Tailscale key", n)
	}
}

func longhornAnnotations(t *testing.T, d decoded) ([]longhornDisk, []string) {
	t.Helper()

	ann := d.v1.MachineConfig.MachineNodeAnnotations

	var (
		disks []longhornDisk
		tags  []string
	)

	if err := json.Unmarshal([]byte(ann[AnnotationLonghornDefaultDisks]), &disks); err != nil {
		t.Fatalf("%s is not JSON: %v", AnnotationLonghornDefaultDisks, err)
	}

	if err := json.Unmarshal([]byte(ann[AnnotationLonghornDefaultNodeTags]), &tags); err != nil {
		t.Fatalf("%s is not JSON: %v", AnnotationLonghornDefaultNodeTags, err)
	}

	return disks, tags
}

func TestRenderWorker(t *testing.T) {
	r, d := render(t, testBundle(t), testCluster(), workerGroup())
	assertCommon(t, d)

	t.Logf("worker config: %d bytes", r.Size)

	if d.v1.Machine().Type().IsControlPlane() {
		t.Error("worker rendered as a control plane")
	}

	labels := d.v1.MachineConfig.MachineNodeLabels
	want := map[string]string{LabelLonghornCreateDefaultDisk: "config", "ohmytalos.io/pool": "worker"}

	if !maps.Equal(labels, want) {
		t.Errorf("labels = %v, want %v", labels, want)
	}

	disks, tags := longhornAnnotations(t, d)
	if len(disks) != 1 || disks[0].Path != "/var/lib/longhorn" || !slices.Equal(disks[0].Tags, []string{"local"}) || !disks[0].AllowScheduling {
		t.Errorf("longhorn disks = %+v", disks)
	}

	if !slices.Equal(tags, []string{"worker"}) {
		t.Errorf("longhorn node tags = %v", tags)
	}

	if len(find[*network.HCloudVIPConfigV1Alpha1](d))+len(find[*extensions.ServiceConfigV1Alpha1](d)) != 0 {
		t.Error("a worker carries the VIP or the Tailscale service")
	}

	if d.v1.ClusterConfig.EtcdConfig != nil {
		t.Error("a worker carries etcd settings")
	}
}

func TestRenderStorage(t *testing.T) {
	r, d := render(t, testBundle(t), testCluster(), storageGroup())
	assertCommon(t, d)

	t.Logf("storage config: %d bytes", r.Size)

	labels := d.v1.MachineConfig.MachineNodeLabels
	want := map[string]string{
		LabelLonghornCreateDefaultDisk: "config",
		LabelRole:                      "storage",
		LabelExcludeFromExternalLB:     "true",
		"ohmytalos.io/pool":            "storage",
	}

	if !maps.Equal(labels, want) {
		t.Errorf("labels = %v, want %v", labels, want)
	}

	// Worker taints go through kubelet registration, not machine.nodeTaints.
	if len(d.v1.MachineConfig.MachineNodeTaints) != 0 {
		t.Errorf("worker machine.nodeTaints = %v, want none", d.v1.MachineConfig.MachineNodeTaints)
	}

	wantTaints := []any{
		map[string]any{"key": "storage", "value": "true", "effect": "NoSchedule"},
		map[string]any{"key": "dedicated", "effect": "PreferNoSchedule"},
	}

	if got := d.v1.MachineConfig.MachineKubelet.KubeletExtraConfig.Object["registerWithTaints"]; !reflect.DeepEqual(got, wantTaints) {
		t.Errorf("kubelet registerWithTaints = %#v, want %#v", got, wantTaints)
	}

	disks, tags := longhornAnnotations(t, d)
	paths := map[string][]string{}

	for _, disk := range disks {
		paths[disk.Path] = disk.Tags
	}

	if len(disks) != 2 || !slices.Equal(paths["/var/lib/longhorn"], []string{"local"}) || !slices.Equal(paths["/var/mnt/longhorn"], []string{"volume"}) {
		t.Errorf("longhorn disks = %+v", disks)
	}

	if !slices.Equal(tags, []string{"storage"}) {
		t.Errorf("longhorn node tags = %v", tags)
	}

	uvs := find[*block.UserVolumeConfigV1Alpha1](d)
	if len(uvs) != 1 || uvs[0].Name() != "longhorn" {
		t.Fatalf("UserVolumeConfigs = %+v", uvs)
	}

	uv := uvs[0]
	assertStaticLocked(t, "longhorn", uv.EncryptionSpec)

	if min, ok := uv.Provisioning().MinSize().Get(); !ok || min != 90_000_000_000 {
		t.Errorf("longhorn minSize = %d (set %t), want 90 GB", min, ok)
	}

	if grow, _ := uv.Provisioning().Grow().Get(); !grow {
		t.Error("longhorn volume does not grow with the Hetzner volume")
	}

	// The selector must pick the attached volume and nothing else.
	sel, ok := uv.Provisioning().DiskSelector().Get()
	if !ok {
		t.Fatal("longhorn volume has no disk selector")
	}

	cases := []struct {
		name   string
		disk   *blockpb.DiskSpec
		system bool
		want   bool
	}{
		{"hetzner volume 100 GiB", &blockpb.DiskSpec{DevPath: "/dev/sdb", Size: 100 << 30}, false, true},
		{"hetzner volume 100 GB", &blockpb.DiskSpec{DevPath: "/dev/sdb", Size: 100_000_000_000}, false, true},
		{"system disk", &blockpb.DiskSpec{DevPath: "/dev/sda", Size: 160 << 30}, true, false},
		{"too small volume", &blockpb.DiskSpec{DevPath: "/dev/sdc", Size: 10 << 30}, false, false},
		{"cd-rom", &blockpb.DiskSpec{DevPath: "/dev/sr0", Size: 200 << 30, Cdrom: true}, false, false},
		{"read-only", &blockpb.DiskSpec{DevPath: "/dev/sdd", Size: 200 << 30, Readonly: true}, false, false},
	}

	for _, tc := range cases {
		got, err := sel.EvalBool(celenv.DiskLocator(), map[string]any{"disk": tc.disk, "system_disk": tc.system})
		if err != nil {
			t.Fatalf("%s: evaluate %s: %v", tc.name, sel, err)
		}

		if got != tc.want {
			t.Errorf("%s: selector %s = %t, want %t", tc.name, sel, got, tc.want)
		}
	}
}
