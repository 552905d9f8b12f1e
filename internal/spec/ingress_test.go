package spec

import "testing"

func TestIngressDefaultsAndValidation(t *testing.T) {
	f, tr := false, true
	cases := []struct {
		name      string
		mutate    func(*Spec)
		wantField string // "" = valid
		on        bool
	}{
		{"on by default: the default pool is a load balancer target", nil, "", true},
		{"off when no pool is a target", func(s *Spec) {
			s.Pools = []Pool{{Name: "w", Count: 1, LoadBalancer: &f}}
		}, "", false},
		{"off when only a storage pool exists", func(s *Spec) { s.Pools = []Pool{{Name: "storage", Count: 3, Storage: true}} }, "", false},
		{"explicitly off", func(s *Spec) { s.Addons.Ingress.Enabled = &f }, "", false},
		{"on without a target pool", func(s *Spec) {
			s.Pools = []Pool{{Name: "w", Count: 1, LoadBalancer: &f}}
			s.Addons.Ingress.Enabled = &tr
		}, "addons.ingress.enabled", true},
		{"off by default without the cloud controller", func(s *Spec) {
			s.Addons.HCloudCCM.Enabled = &f
			s.Addons.HCloudCSI.Enabled = &f
		}, "", false},
		{"on without the cloud controller", func(s *Spec) {
			s.Addons.HCloudCCM.Enabled = &f
			s.Addons.HCloudCSI.Enabled = &f
			s.Addons.Ingress.Enabled = &tr
		}, "addons.ingress.enabled", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, ps := validated(c.mutate)
			if got := s.Addons.Ingress.On(); got != c.on {
				t.Errorf("ingress on = %v, want %v", got, c.on)
			}
			wantProblemOn(t, ps, c.wantField)
		})
	}
}

func TestIngressParses(t *testing.T) {
	s, err := Parse([]byte("name: demo\naddons:\n  ingress: {enabled: false}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Addons.Ingress.Enabled == nil || *s.Addons.Ingress.Enabled {
		t.Fatalf("addons.ingress.enabled: false not read: %+v", s.Addons.Ingress)
	}
}
