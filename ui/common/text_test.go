package common

import (
	"strings"
	"testing"
)

func TestWrapLines(t *testing.T) {
	for _, tc := range []struct {
		in    string
		width int
		want  []string
	}{
		{"a b c", 10, []string{"a b c"}},
		{"alpha beta gamma", 11, []string{"alpha beta", "gamma"}},
		{"one\ntwo", 10, []string{"one", "two"}},
		{strings.Repeat("x", 25), 10, []string{strings.Repeat("x", 10), strings.Repeat("x", 10), strings.Repeat("x", 5)}},
	} {
		got := WrapLines(tc.in, tc.width)
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("WrapLines(%q, %d) = %q, want %q", tc.in, tc.width, got, tc.want)
		}
	}
}
