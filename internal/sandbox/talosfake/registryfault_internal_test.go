package talosfake

import "testing"

// TestRegistryFaultPullErrors: the runtime's answers are containerd's,
// on the normalised reference, and only for the fault at hand.
func TestRegistryFaultPullErrors(t *testing.T) {
	var r registryFaults

	r.set(1, RegistryFault{Forbidden: []string{"registry.k8s.io"}})
	r.setNoIPv4(2, true)
	r.set(3, RegistryFault{NoIPv4: true})
	r.setNoIPv4(3, false)

	const prefix = `rpc error: code = Unknown desc = failed to pull and unpack image `

	for _, tc := range []struct {
		server int64
		image  string
		want   string
	}{
		{1, "registry.k8s.io/e2e-test-images/agnhost:2.53", prefix + `"registry.k8s.io/e2e-test-images/agnhost:2.53": failed to resolve reference "registry.k8s.io/e2e-test-images/agnhost:2.53": unexpected status from HEAD request to https://registry.k8s.io/v2/e2e-test-images/agnhost/manifests/2.53: 403 Forbidden`},
		{1, "ghcr.io/siderolabs/flannel:v0.26.0", ""},
		{1, "docker.io/library/traefik:v3.7.11", ""},
		{2, "ghcr.io/siderolabs/flannel:v0.26.0", prefix + `"ghcr.io/siderolabs/flannel:v0.26.0": failed to resolve reference "ghcr.io/siderolabs/flannel:v0.26.0": failed to do request: Head "https://ghcr.io/v2/siderolabs/flannel/manifests/v0.26.0": dial tcp 140.82.121.34:443: connect: network is unreachable`},
		{2, "registry.k8s.io/pause:3.10", ""},
		{3, "ghcr.io/x/y@sha256:abc", prefix + `"ghcr.io/x/y@sha256:abc": failed to resolve reference "ghcr.io/x/y@sha256:abc": failed to do request: Head "https://ghcr.io/v2/x/y/manifests/sha256:abc": dial tcp 140.82.121.34:443: connect: network is unreachable`},
		{4, "ghcr.io/siderolabs/flannel:v0.26.0", ""},
	} {
		if got := r.pullError(tc.server, tc.image); got != tc.want {
			t.Errorf("server %d pulling %s:\n got %q\nwant %q", tc.server, tc.image, got, tc.want)
		}
	}

	r.set(1, RegistryFault{})

	if got := r.pullError(1, "registry.k8s.io/e2e-test-images/agnhost:2.53"); got != "" {
		t.Errorf("the zero fault did not clear the 403: %q", got)
	}
}

// TestImageRefNormalises: references as distribution's ParseDockerRef
// reads them (docker.io and library/ for short names, latest when no tag).
func TestImageRefNormalises(t *testing.T) {
	for _, tc := range []struct{ in, registry, repo, ref string }{
		{"traefik", "docker.io", "library/traefik", "latest"},
		{"traefik:v3.7.11", "docker.io", "library/traefik", "v3.7.11"},
		{"bitnami/redis:8", "docker.io", "bitnami/redis", "8"},
		{"quay.io/cilium/cilium:v1.19.6@sha256:abc", "quay.io", "cilium/cilium", "sha256:abc"},
		{"localhost/app", "localhost", "app", "latest"},
		{"10.0.0.5:5000/app:1", "10.0.0.5:5000", "app", "1"},
	} {
		reg, repo, ref := imageRef(tc.in)
		if reg != tc.registry || repo != tc.repo || ref != tc.ref {
			t.Errorf("imageRef(%q) = %q %q %q, want %q %q %q", tc.in, reg, repo, ref, tc.registry, tc.repo, tc.ref)
		}
	}

	var r registryFaults
	r.set(1, RegistryFault{Forbidden: []string{"docker.io"}})

	want := `rpc error: code = Unknown desc = failed to pull and unpack image "docker.io/library/traefik:latest": failed to resolve reference "docker.io/library/traefik:latest": unexpected status from HEAD request to https://registry-1.docker.io/v2/library/traefik/manifests/latest: 403 Forbidden`
	if got := r.pullError(1, "traefik"); got != want {
		t.Errorf("docker.io short name:\n got %q\nwant %q", got, want)
	}
}
