package doctor

import (
	"context"
	"strings"
	"testing"
)

const (
	msg403 = `rpc error: code = Unknown desc = failed to pull and unpack image "registry.k8s.io/pause:3.10": failed to resolve reference "registry.k8s.io/pause:3.10": unexpected status from HEAD request to https://registry.k8s.io/v2/pause/manifests/3.10: 403 Forbidden`
	msgV6  = `Back-off pulling image "ghcr.io/siderolabs/flannel:v0.26.0": ErrImagePull: rpc error: code = Unknown desc = failed to pull and unpack image "ghcr.io/siderolabs/flannel:v0.26.0": failed to resolve reference "ghcr.io/siderolabs/flannel:v0.26.0": failed to do request: Head "https://ghcr.io/v2/siderolabs/flannel/manifests/v0.26.0": dial tcp 140.82.121.34:443: connect: network is unreachable`
)

func TestImagePulls(t *testing.T) {
	ctx := context.Background()
	env, _ := healthyCluster()
	env.Kube = &fakeKube{}
	expect(t, checkImagePulls(ctx, env), StatusPass, "no container waits on an image pull")

	env.Kube = &fakeKube{pulls: []PullFailure{
		{Namespace: "default", Pod: "web-1", Node: "worker-1", Container: "web", Image: "ghcr.io/siderolabs/flannel:v0.26.0", Reason: "ImagePullBackOff", Message: msgV6},
		{Namespace: "kube-system", Pod: "coredns-1", Node: "cp-2", Container: "coredns", Image: "registry.k8s.io/coredns/coredns:v1.12.0", Reason: "ErrImagePull", Message: msg403},
		{Namespace: "default", Pod: "typo", Node: "worker-1", Container: "app", Image: "docker.io/library/ngnix:1.27", Reason: "ErrImagePull",
			Message: `rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/library/ngnix:1.27": docker.io/library/ngnix:1.27: not found`},
	}}
	r := checkImagePulls(ctx, env)
	expect(t, r, StatusFail, "cp-2 (203.0.113.2): registry.k8s.io answers 403 Forbidden: GeoIP block: replace this server",
		"worker-1: ghcr.io is unreachable: the node has no IPv4 egress (IPv6-only) and ghcr.io has no IPv6",
		"docker.io/library/ngnix:1.27 does not exist", "replace server cp-2", "publicNetwork.ipv4: true", "3 container(s)")
	// Sorted by cause: the GeoIP block first, then IPv6-only, then the typo.
	ev := strings.Join(r.Evidence, "\n")
	if !(strings.Index(ev, "GeoIP") < strings.Index(ev, "IPv6-only") && strings.Index(ev, "IPv6-only") < strings.Index(ev, "does not exist")) {
		t.Errorf("evidence not sorted by cause:\n%s", ev)
	}
	expect(t, checkImagePulls(ctx, &Env{}), StatusSkip, "no kubeconfig")
}
