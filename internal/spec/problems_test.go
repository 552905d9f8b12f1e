package spec

import (
	"strings"
	"testing"
)

// TestATypoHidesNothing is the case: a misspelled key, a subnet
// outside the network and a control-plane count of 0 are reported together,
// and so is a value of the wrong type.
func TestATypoHidesNothing(t *testing.T) {
	cases := []struct {
		name, spec string
		want       []string
	}{
		{
			"typo, layout and value",
			"name: demo\nnetwork: {cidr: 10.0.0.0/16}\ncontrolPlane:\n  count: 0\n  serverTyp: cpx22\n  subnet: 192.168.1.0/24\n  vip: 192.168.1.100\n",
			[]string{"controlPlane.serverTyp", "controlPlane.count", "controlPlane.subnet"},
		},
		{
			"wrong type and bad value",
			"name: demo\npools:\n- name: worker\n  count: three\nloadBalancer: {type: big}\n",
			[]string{"line 4", "loadBalancer.type"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ps := parseProblems(t, c.spec)
			for _, f := range c.want {
				if !ps.Has(f) {
					t.Errorf("no problem on %s in:\n%v", f, ps)
				}
			}
		})
	}
}

func TestDecodeReportsEveryKeyAndType(t *testing.T) {
	_, err := Decode([]byte("nmae: demo\ncontrolPlane: {count: three, serverTyp: cpx22}\n"))
	ps, ok := err.(Problems)
	if !ok || !ps.Has("nmae") || !ps.Has("controlPlane.serverTyp") || !ps.Has("line 2") {
		t.Fatalf("err = %v", err)
	}
	for _, p := range ps {
		if p.Field == "line 2" && (!strings.Contains(p.Reason, "wrong type") || p.Fix == "") {
			t.Errorf("type problem %+v", p)
		}
	}
}
