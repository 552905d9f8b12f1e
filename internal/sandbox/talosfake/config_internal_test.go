package talosfake

import "testing"

func TestImageTag(t *testing.T) {
	for image, want := range map[string]string{
		"ghcr.io/siderolabs/kubelet:v1.35.0":             "v1.35.0",
		"registry.local:5000/siderolabs/kubelet:v1.34.2": "v1.34.2",
		"ghcr.io/siderolabs/kubelet:v1.35.1@sha256:abcd": "v1.35.1",
		"registry.local:5000/siderolabs/kubelet":         "fallback",
		"":                                               "fallback",
	} {
		if got := imageTag(image, "fallback"); got != want {
			t.Errorf("imageTag(%q) = %q, want %q", image, got, want)
		}
	}
}
