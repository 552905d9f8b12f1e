package talos

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseTaints(t *testing.T) {
	got, err := parseTaints([]string{"a=b:NoSchedule", "example.com/c:NoExecute", "d=:PreferNoSchedule"})
	if err != nil {
		t.Fatal(err)
	}

	want := []taint{{"a", "b", "NoSchedule"}, {"example.com/c", "", "NoExecute"}, {"d", "", "PreferNoSchedule"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseTaints = %+v, want %+v", got, want)
	}

	bad := map[string]string{
		"a=b":                    "effect",
		"a=b:":                   "effect",
		"=b:NoSchedule":          "key",
		"bad key:NoExecute":      "key",
		"a=bad value:NoSchedule": "value",
	}

	for in, want := range bad {
		_, err := parseTaints([]string{in})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseTaints(%q) = %v, want an error about the %s", in, err, want)
		}
	}

	if _, err := parseTaints([]string{"a=b:NoSchedule", "a=c:NoExecute"}); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("duplicate key: %v", err)
	}
}
