package kubefake

import (
	"fmt"
	"strings"
)

// Image pulls as the kubelet reports them (kubernetes
// pkg/kubelet/images/image_manager.go, pullImage and evalCRIPullErr): a
// failed pull leaves the container waiting with reason ErrImagePull and
// the runtime's error as message, records the Warning event "Failed to
// pull image %q: %v", and while the pull backs off the reason is
// ImagePullBackOff with the message "Back-off pulling image %q: " followed
// by "ErrImagePull: " and the last error (Kubernetes >= 1.32). The
// runtime's errors are containerd's CRI answers as Talos' containerd gives
// them ("rpc error: code = Unknown desc = failed to pull and unpack image
// ...", containerd core/remotes/docker/resolver.go).

// ipv4OnlyRegistries have no IPv6 address: a node without IPv4 egress
// cannot reach them (ghcr.io publishes A records only; hcloud-k8s #258).
var ipv4OnlyRegistries = map[string]string{"ghcr.io": "140.82.121.34"}

// RegistryFault is what stands between a node and the registries.
type RegistryFault struct {
	// Forbidden registries answer 403, as registry.k8s.io does to Hetzner
	// addresses that GeoIP databases misplace (hcloud-talos #46, #150).
	Forbidden []string
	// NoIPv4 is a node without IPv4 egress (IPv6-only): IPv4-only
	// registries are unreachable.
	NoIPv4 bool
}

// SetRegistryFault injects a registry fault for a node's kubelet; the
// zero value clears it.
func (s *Server) SetRegistryFault(node string, f RegistryFault) {
	s.mu.Lock()
	defer s.mu.Unlock()

	if s.registryFaults == nil {
		s.registryFaults = map[string]RegistryFault{}
	}

	s.registryFaults[node] = f
	s.kickLocked()
}

// imageRef splits an image reference as the container runtime resolves
// it: the registry (docker.io for a name without one), the repository, and
// the tag or digest the manifest is fetched by.
func imageRef(img string) (registry, repo, ref string) {
	name := img
	ref = "latest"

	if i := strings.LastIndex(name, "@"); i >= 0 {
		name, ref = name[:i], name[i+1:]
	} else if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name, ref = name[:i], name[i+1:]
	}

	registry, repo = "docker.io", name
	if i := strings.Index(name, "/"); i > 0 && strings.ContainsAny(name[:i], ".:") || strings.HasPrefix(name, "localhost/") {
		registry, repo = name[:i], name[i+1:]
	} else if !strings.Contains(name, "/") {
		repo = "library/" + name
	}

	return registry, repo, ref
}

// pullErrorLocked is the runtime's error pulling img on node, "" when the
// pull succeeds.
func (s *Server) pullErrorLocked(node, img string) string {
	f := s.registryFaults[node]
	registry, repo, ref := imageRef(img)
	host := registry

	if registry == "docker.io" {
		host = "registry-1.docker.io"
	}

	manifest := fmt.Sprintf("https://%s/v2/%s/manifests/%s", host, repo, ref)
	prefix := fmt.Sprintf("rpc error: code = Unknown desc = failed to pull and unpack image %q: failed to resolve reference %q: ", img, img)

	for _, r := range f.Forbidden {
		if r == registry {
			return prefix + "unexpected status from HEAD request to " + manifest + ": 403 Forbidden"
		}
	}

	if ip, ok := ipv4OnlyRegistries[registry]; ok && (f.NoIPv4 || s.noIPv4[node]) {
		return prefix + fmt.Sprintf("failed to do request: Head %q: dial tcp %s:443: connect: network is unreachable", manifest, ip)
	}

	return ""
}

// pullStatusLocked plays the kubelet's image manager for a pod's
// containers on node: nil when every image is pulled, else the waiting
// state (reason, message) per container name of those whose pull fails.
func (s *Server) pullStatusLocked(p obj, node string) map[string][2]string {
	var out map[string][2]string

	uid := str(p, "metadata", "uid")

	for _, c := range listAt(p, "spec", "containers") {
		img := str(c, "image")

		msg := s.pullErrorLocked(node, img)
		if msg == "" {
			continue
		}

		if out == nil {
			out = map[string][2]string{}
		}

		key := uid + "_" + img
		if s.pullFailures[key] == 0 {
			s.recordEventLocked(p, "Warning", "Failed", fmt.Sprintf("Failed to pull image %q: %s", img, msg), "kubelet")
			out[str(c, "name")] = [2]string{"ErrImagePull", msg}
		} else {
			out[str(c, "name")] = [2]string{"ImagePullBackOff", fmt.Sprintf("Back-off pulling image %q: ErrImagePull: %s", img, msg)}
		}

		s.pullFailures[key]++
	}

	return out
}

// setPullWaiting records failed pulls: those containers wait, the others
// run; the pod is Running once any container runs.
func (s *Server) setPullWaiting(p, node obj, hostNet bool, failed map[string][2]string) {
	running := len(failed) < len(listAt(p, "spec", "containers"))
	s.setContainers(p, "running", "", "", true)

	for _, cs := range listAt(p, "status", "containerStatuses") {
		m, _ := cs.(map[string]any)
		if w, ok := failed[str(m, "name")]; ok {
			m["ready"], m["started"] = false, false
			m["state"] = obj{"waiting": obj{"reason": w[0], "message": w[1]}}
		}
	}

	phase := "Pending"
	if running {
		phase = "Running"

		s.setPodIP(p, node, hostNet)
	}

	set(p, phase, "status", "phase")
	s.setCondition(p, "ContainersReady", "False", "ContainersNotReady", "containers with unready status")
	s.setCondition(p, "Ready", "False", "ContainersNotReady", "containers with unready status")
}

// pullFailingLocked reports whether some container image of p fails to
// pull on node.
func (s *Server) pullFailingLocked(p, node obj) bool {
	name := str(node, "metadata", "name")
	if f := s.registryFaults[name]; !f.NoIPv4 && len(f.Forbidden) == 0 && !s.noIPv4[name] {
		return false
	}

	for _, c := range listAt(p, "spec", "containers") {
		if s.pullErrorLocked(name, str(c, "image")) != "" {
			return true
		}
	}

	return false
}
