package talosfake

import (
	"strings"
	"testing"
)

func TestParseInstallerRegistries(t *testing.T) {
	id := strings.Repeat("ab", 32)
	sandbox := []string{"127.0.0.1:8080"}
	for _, tc := range []struct {
		ref string
		ok  bool
	}{
		{"factory.talos.dev/hcloud-installer/" + id + ":v1.13.9", true},
		{"127.0.0.1:8080/hcloud-installer/" + id + ":v1.13.9", true},
		{"127.0.0.1:9090/hcloud-installer/" + id + ":v1.13.9", false},
		{"ghcr.io/siderolabs/installer:v1.13.9", false},
		{"127.0.0.1:8080/hcloud-installer/" + id, false},
	} {
		inst, err := parseInstaller(tc.ref, sandbox)
		if (err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.ref, err)
		}
		if tc.ok && (inst.schematic != id || inst.version != "v1.13.9") {
			t.Errorf("%s: parsed %+v", tc.ref, inst)
		}
	}
}
