package doctor

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// PullFailure is a container the kubelet could not pull the image of: its
// status is waiting with reason ErrImagePull or ImagePullBackOff.
type PullFailure struct {
	// Namespace and Pod locate the pod; Node is where it runs.
	Namespace, Pod, Node string
	// Container and Image name the container and its image.
	Container, Image string
	// Reason is ErrImagePull or ImagePullBackOff; Message the kubelet's.
	Reason, Message string
}

// PodSource lists failing image pulls; a KubeSource that implements it
// enables the image-pulls check.
type PodSource interface {
	// PullFailures lists the containers waiting on an image pull.
	PullFailures(ctx context.Context) ([]PullFailure, error)
}

// pullCause is one kind of image pull failure, with what to do about it.
type pullCause struct {
	order     int
	what, why string
	fix       string
}

var unreachableIPv4 = regexp.MustCompile(`dial tcp (\d+\.\d+\.\d+\.\d+):\d+: connect: network is unreachable`)

// ipv4OnlyRegistries have no IPv6 address (hcloud-k8s #258: ghcr.io).
var ipv4OnlyRegistries = map[string]bool{"ghcr.io": true}

// imageRegistry is the registry an image reference pulls from.
func imageRegistry(img string) string {
	if i := strings.Index(img, "/"); i > 0 && (strings.ContainsAny(img[:i], ".:") || img[:i] == "localhost") {
		return img[:i]
	}
	return "docker.io"
}

// classifyPull sorts one failure by its cause (the kubelet's message is
// containerd's error).
func classifyPull(f PullFailure, node NodeRef) pullCause {
	reg, msg := imageRegistry(f.Image), f.Message
	addr := node.PublicIP
	if addr == "" {
		addr = "no public IPv4"
	}
	switch {
	case strings.Contains(msg, "403 Forbidden") && reg == "registry.k8s.io":
		return pullCause{order: 0, what: fmt.Sprintf("%s (%s): registry.k8s.io answers 403 Forbidden: GeoIP block: replace this server", f.Node, addr),
			why: "registry.k8s.io refuses addresses that GeoIP databases place in sanctioned countries, and some Hetzner addresses are misplaced (hcloud-talos #46, #150; kube-hetzner #1664); Hetzner's advice is to replace the server so that it gets another address",
			fix: fmt.Sprintf("replace server %s (delete it, apply again: the new one gets another IP), or pull through a registry mirror (machine.registries.mirrors)", f.Node)}
	case unreachableIPv4.MatchString(msg):
		note := ""
		if ipv4OnlyRegistries[reg] {
			note = fmt.Sprintf(" and %s has no IPv6", reg)
		}
		return pullCause{order: 1, what: fmt.Sprintf("%s: %s is unreachable: the node has no IPv4 egress (IPv6-only)%s", f.Node, reg, note),
			why: "an IPv6-only node reaches only registries with IPv6; ghcr.io publishes IPv4 addresses only (hcloud-k8s #258)",
			fix: "give the nodes a public IPv4 (publicNetwork.ipv4: true), or IPv4 egress through the network gateway and a NAT gateway (see the egress check), or mirror the images to a registry with IPv6"}
	case strings.Contains(msg, "401 Unauthorized") || strings.Contains(msg, "403 Forbidden") || strings.Contains(msg, "denied"):
		return pullCause{order: 2, what: fmt.Sprintf("%s refuses %s: credentials", reg, f.Image),
			why: "the registry wants credentials the pod does not have", fix: "add an imagePullSecret for " + reg + " to the pod's service account, or fix the one it has"}
	case strings.Contains(msg, "not found") || strings.Contains(msg, "manifest unknown"):
		return pullCause{order: 3, what: fmt.Sprintf("%s does not exist in %s", f.Image, reg),
			why: "the image name or tag is wrong", fix: "correct the image reference (name, tag, digest)"}
	case strings.Contains(msg, "no such host") || strings.Contains(msg, "i/o timeout") || strings.Contains(msg, "connection refused"):
		return pullCause{order: 4, what: fmt.Sprintf("%s: %s cannot be reached", f.Node, reg),
			why: "the node cannot resolve or reach the registry", fix: "check the node's DNS and egress (egress check), and the registry's status"}
	}
	return pullCause{order: 5, what: fmt.Sprintf("%s: pulling %s fails", f.Node, f.Image),
		why: "the container runtime reports an error the doctor does not recognise", fix: "read the pod's events (kubectl describe pod)"}
}

// checkImagePulls lists the containers waiting on an image pull, sorted
// by cause, and says for each cause what to do.
func checkImagePulls(ctx context.Context, env *Env) Result {
	if env.Kube == nil {
		return skip(noKube)
	}
	fails, r, ok := fetch(ctx, env.Kube, "this Kubernetes source cannot list pods", PodSource.PullFailures, "the pods' container statuses")
	if !ok {
		return r
	}
	if len(fails) == 0 {
		return pass("no container waits on an image pull (ErrImagePull, ImagePullBackOff)")
	}
	refs := map[string]NodeRef{}
	for _, n := range append(append([]NodeRef{}, env.ControlPlanes...), env.Workers...) {
		refs[n.Name] = n
	}
	type group struct {
		cause pullCause
		pods  []string
	}
	groups := map[string]*group{}
	for _, f := range fails {
		c := classifyPull(f, refs[f.Node])
		g := groups[c.what]
		if g == nil {
			g = &group{cause: c}
			groups[c.what] = g
		}
		g.pods = append(g.pods, fmt.Sprintf("%s/%s %s (%s): %s", f.Namespace, f.Pod, f.Container, f.Reason, f.Message))
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := groups[keys[i]].cause, groups[keys[j]].cause
		return a.order < b.order || (a.order == b.order && a.what < b.what)
	})
	var evidence, whys, fixes []string
	for _, k := range keys {
		g := groups[k]
		evidence = append(evidence, g.cause.what)
		for _, p := range g.pods {
			evidence = append(evidence, "  "+p)
		}
		whys, fixes = append(whys, g.cause.why), append(fixes, g.cause.fix)
	}
	return Result{Status: StatusFail, Evidence: evidence,
		Explanation: fmt.Sprintf("%d container(s) cannot start because their image does not pull: ", len(fails)) + strings.Join(uniq(whys), "; "),
		Fix:         strings.Join(uniq(fixes), "; ")}
}
