package spec

import "testing"

func TestAddonDefaultsAndValidation(t *testing.T) {
	f := false
	cases := []struct {
		name      string
		mutate    func(*Spec)
		wantField string // "" = valid
		check     func(*Spec) bool
	}{
		{"defaults: Cilium, CCM, CSI on; Longhorn and metrics-server off", nil, "",
			func(s *Spec) bool {
				a := s.Addons
				return a.Cilium.On() && a.HCloudCCM.On() && a.HCloudCSI.On() && !a.Longhorn.On() && !a.MetricsServer.On() &&
					a.Cilium.Version == DefaultCiliumVersion && a.Longhorn.Version == DefaultLonghornVersion
			}},
		{"storage pool turns Longhorn on", func(s *Spec) { s.Pools = []Pool{{Name: "storage", Count: 3, Storage: true}} }, "",
			func(s *Spec) bool { return s.Addons.Longhorn.On() }},
		{"bad version", func(s *Spec) { s.Addons.Cilium.Version = "1.19" }, "addons.cilium.version", nil},
		{"Longhorn without a storage pool", func(s *Spec) { tr := true; s.Addons.Longhorn.Enabled = &tr }, "addons.longhorn.enabled", nil},
		{"CSI without CCM", func(s *Spec) { s.Addons.HCloudCCM.Enabled = &f }, "addons.hcloudCSI.enabled", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, ps := validated(c.mutate)
			wantProblemOn(t, ps, c.wantField)
			if c.check != nil && !c.check(s) {
				t.Errorf("defaults wrong: %+v", s.Addons)
			}
		})
	}
}

func TestAddonsUnknownKey(t *testing.T) {
	_, err := Parse([]byte("name: demo\naddons:\n  cillium: {enabled: false}\n"))
	ps, ok := err.(Problems)
	if !ok || !ps.Has("addons.cillium") {
		t.Fatalf("want an unknown-key problem for addons.cillium, got %v", err)
	}
}
