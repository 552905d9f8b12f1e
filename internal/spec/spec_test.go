package spec

import (
	"os"
	"strings"
	"testing"
)

func TestSeedParses(t *testing.T) {
	s, err := Load("../../examples/seed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	nodes := s.Nodes()
	if len(nodes) != 5 {
		t.Fatalf("nodes = %d, want 5", len(nodes))
	}
	if nodes[0].Name != "demo-cp-1" || nodes[0].PrivateIP != "10.0.1.11" {
		t.Errorf("first node = %+v", nodes[0])
	}
	if nodes[4].Name != "demo-worker-2" || nodes[4].PrivateIP != "10.0.2.12" {
		t.Errorf("last node = %+v", nodes[4])
	}
}

func TestDefaults(t *testing.T) {
	s, err := Parse([]byte("name: demo\n"))
	if err != nil {
		t.Fatal(err)
	}
	checks := map[string][2]string{
		"talos":    {s.Talos.Version, DefaultTalosVersion},
		"k8s":      {s.Kubernetes.Version, "1.36.3"},
		"location": {s.Location, "nbg1"},
		"zone":     {s.Network.Zone, "eu-central"},
		"cidr":     {s.Network.CIDR, "10.0.0.0/16"},
		"pods":     {s.Network.Pods, "10.42.0.0/16"},
		"services": {s.Network.Services, "10.43.0.0/16"},
		"cpType":   {s.ControlPlane.ServerType, "cpx22"},
		"cpSubnet": {s.ControlPlane.Subnet, "10.0.1.0/24"},
		"vip":      {s.ControlPlane.VIP, "10.0.1.100"},
		"pool":     {s.Pools[0].Name + "/" + s.Pools[0].ServerType + "/" + s.Pools[0].Subnet, "worker/cpx32/10.0.2.0/24"},
		"lb":       {s.LoadBalancer.Type, "lb11"},
		"endpoint": {s.Endpoint.Mode, "vip"},
		"token":    {s.Secrets.HCloudToken.Provider + ":" + s.Secrets.HCloudToken.Ref, "env:HCLOUD_TOKEN"},
		"cpExt":    {strings.Join(s.Schematics.ControlPlane.Extensions, ","), "siderolabs/tailscale"},
		"wExt":     {strings.Join(s.Schematics.Worker.Extensions, ","), "siderolabs/iscsi-tools,siderolabs/util-linux-tools"},
	}
	for name, c := range checks {
		if c[0] != c[1] {
			t.Errorf("%s = %q, want %q", name, c[0], c[1])
		}
	}
	if s.ControlPlane.Count != 3 || s.Pools[0].Count != 2 || !s.Pools[0].InLoadBalancer() {
		t.Errorf("counts/lb wrong: %+v %+v", s.ControlPlane, s.Pools[0])
	}
	if !s.PublicNetwork.IPv4 || !s.PublicNetwork.IPv6 {
		t.Error("public network defaults off")
	}
}

func TestStoragePoolDefaultsOutOfLB(t *testing.T) {
	s, err := Parse([]byte("name: demo\npools:\n- name: storage\n  storage: true\n  volumeSize: 100\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Pools[0].InLoadBalancer() {
		t.Error("storage pool must default out of the load balancer")
	}
}

func TestKubernetesVersionStripsV(t *testing.T) {
	s, err := Parse([]byte("name: demo\nkubernetes: {version: v1.35.0}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Kubernetes.Version != "1.35.0" {
		t.Errorf("version = %q", s.Kubernetes.Version)
	}
}

func TestValidationErrors(t *testing.T) {
	cases := []struct {
		name, yaml, field, reason string
	}{
		{"missing name", "talos: {version: v1.13.9}\n", "name", "required"},
		{"bad name", "name: Demo_1\n", "name", "DNS label"},
		{"long name", "name: " + strings.Repeat("a", 31) + "\n", "name", "DNS label"},
		{"talos version", "name: d\ntalos: {version: 1.13}\n", "talos.version", "not a Talos"},
		{"k8s version", "name: d\nkubernetes: {version: latest}\n", "kubernetes.version", "not a Kubernetes"},
		{"location", "name: d\nlocation: xyz1\n", "location", "not a Hetzner Cloud location"},
		{"zone mismatch", "name: d\nlocation: ash\nnetwork: {zone: eu-central}\n", "location", "network zone"},
		{"zone", "name: d\nnetwork: {zone: mars}\n", "network.zone", "not a Hetzner network zone"},
		{"cidr", "name: d\nnetwork: {cidr: 10.0.0.0}\n", "network.cidr", "not a CIDR"},
		{"ipv6 cidr", "name: d\nnetwork: {cidr: 'fd00::/8'}\n", "network.cidr", "IPv6"},
		{"pods", "name: d\nnetwork: {pods: nope}\n", "network.pods", "not a CIDR"},
		{"services", "name: d\nnetwork: {services: 10.43.0.0/33}\n", "network.services", "not a CIDR"},
		{"even cp", "name: d\ncontrolPlane: {count: 2}\n", "controlPlane.count", "quorum"},
		{"cp type", "name: d\ncontrolPlane: {serverType: 'big one'}\n", "controlPlane.serverType", "server type"},
		{"cp subnet", "name: d\ncontrolPlane: {subnet: x}\n", "controlPlane.subnet", "not a CIDR"},
		{"vip", "name: d\ncontrolPlane: {vip: 10.0.1}\n", "controlPlane.vip", "not an IP"},
		{"vip link", "name: d\ncontrolPlane: {vipLink: 'eth 1'}\n", "controlPlane.vipLink", "interface name"},
		{"pool name", "name: d\npools: [{name: Work}]\n", "pools[0].name", "DNS label"},
		{"pool reserved", "name: d\npools: [{name: controlplane}]\n", "pools[0].name", "reserved"},
		{"pool dup", "name: d\npools: [{name: w}, {name: w}]\n", "pools[1].name", "also the name"},
		{"pool type", "name: d\npools: [{name: w, serverType: '??'}]\n", "pools[0].serverType", "server type"},
		{"pool count", "name: d\npools: [{name: w, count: -1}]\n", "pools[0].count", "out of range"},
		{"pool subnet", "name: d\npools: [{name: w, subnet: '1.2.3.4'}]\n", "pools[0].subnet", "not a CIDR"},
		{"pool location", "name: d\npools: [{name: w, location: mars}]\n", "pools[0].location", "location"},
		{"volume", "name: d\npools: [{name: w, volumeSize: 5}]\n", "pools[0].volumeSize", "volume sizes"},
		{"label", "name: d\npools: [{name: w, labels: {'bad key!': x}}]\n", "pools[0].labels.bad key!", "label key"},
		{"taint", "name: d\npools: [{name: w, taints: ['a=b']}]\n", "pools[0].taints[0]", "not a taint"},
		{"storage in lb", "name: d\npools: [{name: s, storage: true, loadBalancer: true}]\n", "pools[0].loadBalancer", "storage pool"},
		{"schematic ref", "name: d\npools: [{name: w, schematic: gpu}]\n", "pools[0].schematic", "no schematic"},
		{"lb type", "name: d\nloadBalancer: {type: lb99}\n", "loadBalancer.type", "load balancer type"},
		{"endpoint", "name: d\nendpoint: {mode: magic}\n", "endpoint.mode", "endpoint mode"},
		{"firewall", "name: d\nfirewall: {allow: [me]}\n", "firewall.allow[0]", "not a CIDR"},
		{"extension", "name: d\nschematics: {worker: {extensions: [tailscale]}}\n", "schematics.worker.extensions[0]", "extension name"},
		{"provider", "name: d\nsecrets: {hcloudToken: {provider: vault, ref: x}}\n", "secrets.hcloudToken.provider", "secret provider"},
		{"ref", "name: d\nsecrets: {hcloudToken: {provider: bw}}\n", "secrets.hcloudToken.ref", "required"},
		{"env ref", "name: d\nsecrets: {hcloudToken: {provider: env, ref: 'a-b'}}\n", "secrets.hcloudToken.ref", "variable name"},
		{"domain", "name: d\ndomains: ['a b']\n", "domains[0]", "domain name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ps := parseProblems(t, c.yaml)
			for _, p := range ps {
				if p.Field == c.field {
					if !strings.Contains(p.Reason, c.reason) {
						t.Errorf("reason %q does not contain %q", p.Reason, c.reason)
					}
					if p.Fix == "" {
						t.Errorf("no fix for %s", p.Field)
					}
					return
				}
			}
			t.Errorf("no problem on %s; got %v", c.field, ps)
		})
	}
}

func TestAllProblemsAtOnce(t *testing.T) {
	_, err := Parse([]byte("name: X\nlocation: mars\nloadBalancer: {type: big}\n"))
	ps := err.(Problems)
	for _, f := range []string{"name", "location", "loadBalancer.type"} {
		if !ps.Has(f) {
			t.Errorf("missing problem on %s in %v", f, ps)
		}
	}
}

func TestUnknownKeys(t *testing.T) {
	_, err := Parse([]byte("name: d\ncontrolPlane:\n  serverTyp: cpx22\npools:\n- name: w\n  lables: {}\nbogus: 1\n"))
	ps, ok := err.(Problems)
	if !ok {
		t.Fatalf("err = %v", err)
	}
	want := map[string]string{
		"controlPlane.serverTyp": `did you mean "controlPlane.serverType"`,
		"pools[0].lables":        `did you mean "pools[0].labels"`,
		"bogus":                  "known keys here",
	}
	for field, fix := range want {
		found := false
		for _, p := range ps {
			if p.Field == field {
				found = true
				if !strings.Contains(p.Fix, fix) || !strings.Contains(p.Reason, "unknown key (line") {
					t.Errorf("%s: %+v", field, p)
				}
			}
		}
		if !found {
			t.Errorf("no problem for %s: %v", field, ps)
		}
	}
}

func TestBadYAMLAndTypes(t *testing.T) {
	for _, in := range []string{"name: [\n", "controlPlane: {count: three}\n", "pools: 3\n"} {
		if _, err := Parse([]byte(in)); err == nil {
			t.Errorf("%q parsed", in)
		}
	}
}

func TestRoundTripAndHash(t *testing.T) {
	s := Default("demo")
	b, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	s2, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if s.Hash() != s2.Hash() {
		t.Error("hash changed over a round trip")
	}
	s2.Pools[0].Count = 3
	if s.Hash() == s2.Hash() {
		t.Error("hash did not change with the spec")
	}
	p := t.TempDir() + "/ohmytalos.yaml"
	if err := s.Save(p); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(p); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(t.TempDir() + "/none.yaml"); err == nil || !strings.Contains(err.Error(), "ohmytalos init") {
		t.Errorf("missing file error = %v", err)
	}
	_ = os.Remove(p)
}

func TestArch(t *testing.T) {
	if Arch("cax11") != "arm64" || Arch("cpx22") != "amd64" || Arch("ccx13") != "amd64" {
		t.Error("arch mapping")
	}
}

func FuzzParse(f *testing.F) {
	seed, _ := os.ReadFile("../../examples/seed.yaml")
	f.Add(seed)
	f.Add([]byte("name: d\npools: [{name: w, labels: {a: b}, taints: ['x:NoSchedule']}]\n"))
	f.Add([]byte("network: {cidr: '::/0'}\ncontrolPlane: {subnet: 10.0.0.0/33, vip: x}\n"))
	f.Add([]byte("- a\n- b\n"))
	f.Add([]byte("{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data)
		if err == nil && s != nil {
			_ = s.Nodes()
			_ = s.Hash()
		}
	})
}

func TestLayoutProblems(t *testing.T) {
	cases := []struct{ yaml, field string }{
		{"name: d\ncontrolPlane: {vip: 10.0.9.1}\n", "controlPlane.vip"},
		{"name: d\npools: [{name: w, subnet: 10.0.1.0/24}]\n", "pools[0].subnet"},
		{"name: d\nnetwork: {pods: 100.64.0.0/16}\n", "network.pods"},
		{"name: d\npools: [{name: w, subnet: 10.9.0.0/24}]\nnetwork: {cidr: 10.0.0.0/16}\n", "pools[0].subnet"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.yaml))
		ps, ok := err.(Problems)
		if !ok || !ps.Has(c.field) {
			t.Errorf("%q: want a problem on %s, got %v", c.yaml, c.field, err)
		}
	}
	s := Default("demo")
	u := s.Usage()
	if len(u.Pools) != 2 || u.Pools[0].Count != 3 || len(u.LoadBalancers) != 1 || len(u.Snapshots) != 2 {
		t.Errorf("usage = %+v", u)
	}
}

func TestDiff(t *testing.T) {
	a := Default("demo")
	b := Default("demo")
	b.Pools[0].Count = 4
	ab, _ := a.Marshal()
	bb, _ := b.Marshal()
	d := Diff(ab, bb)
	if len(d) != 2 || d[0] != "-     count: 2" || d[1] != "+     count: 4" {
		t.Errorf("diff = %q", d)
	}
	if len(Diff(ab, ab)) != 0 {
		t.Error("diff of equal specs")
	}
}
