package kubeconfig

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestNameFirst(t *testing.T) {
	cases := map[string]string{
		"{a: 1, b: 2, name: x}": "name,a,b",
		"{name: x, a: 1}":       "name,a",
		"{a: 1, name: x, z: 3}": "name,a,z",
		"{a: 1}":                "a",
	}
	for in, want := range cases {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(in), &doc); err != nil {
			t.Fatal(err)
		}
		m := doc.Content[0]
		nameFirst(m)
		var keys []string
		for i := 0; i < len(m.Content); i += 2 {
			keys = append(keys, m.Content[i].Value)
		}
		if got := strings.Join(keys, ","); got != want {
			t.Errorf("nameFirst(%s) keys = %s, want %s", in, got, want)
		}
	}
}
