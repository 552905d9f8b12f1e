package talosfake

import (
	"fmt"
	"strings"
	"sync"
)

// Image pulls as the node's container runtime answers them. The simulated
// kubelet (kubereal/kubeletpull.go) plays the kubelet's image manager
// (kubernetes pkg/kubelet/images/image_manager.go): a failed pull is
// ErrImagePull with the runtime's error, a Warning "Failed to pull image
// %q: %v" event, then ImagePullBackOff. The runtime's errors here are
// containerd's CRI answers as Talos' containerd gives them:
//   - containerd internal/cri/server/images/image_pull.go: "failed to pull
//     and unpack image %q: %w", the reference normalised by
//     distribution's ParseDockerRef (docker.io/library/NAME:latest);
//   - containerd client/pull.go: "failed to resolve reference %q: %w";
//   - containerd core/remotes/errors/errors.go (ErrUnexpectedStatus):
//     "unexpected status from HEAD request to URL: 403 Forbidden";
//   - containerd core/remotes/docker/resolver.go: "failed to do request:
//     %w" around net/http's `Head "URL": dial tcp IP:443: connect: network
//     is unreachable` when the node has no route to an IPv4 address;
//   - the CRI gRPC status: "rpc error: code = Unknown desc = ...".

// ipv4OnlyRegistries have no IPv6 address: a node without IPv4 egress
// cannot reach them (ghcr.io publishes A records only; hcloud-k8s #258).
// The address is one of ghcr.io's A records.
var ipv4OnlyRegistries = map[string]string{"ghcr.io": "140.82.121.34"}

// RegistryFault is what stands between a node and the registries.
type RegistryFault struct {
	// Forbidden registries answer 403, as registry.k8s.io does to Hetzner
	// addresses that GeoIP databases misplace (hcloud-talos #46, #150).
	Forbidden []string
	// NoIPv4 is a node without IPv4 egress (IPv6-only): IPv4-only
	// registries are unreachable. A node whose routes have no IPv4
	// default route (no public IPv4 and no route via the network
	// gateway) behaves so without it.
	NoIPv4 bool
}

// registryFaults holds the injected faults and what each node's routes
// say about IPv4 egress, by server ID. It has its own lock: the
// kubelets' goroutines ask it on every pull, never under Cluster.mu.
type registryFaults struct {
	mu       sync.Mutex
	byServer map[int64]RegistryFault
	noIPv4   map[int64]bool
}

// SetRegistryFault makes the registries answer the server's kubelet as
// f says (a GeoIP 403, no IPv4 egress); the zero value clears it. It
// needs the node configured and its cluster on the real control plane,
// whose simulated kubelets ask for it on every pull.
func (c *Cluster) SetRegistryFault(serverID int64, f RegistryFault) error {
	c.mu.Lock()
	defer c.mu.Unlock()

	n := c.nodes[serverID]
	if n == nil || n.cfg == nil || n.cfg.maintenance {
		return fmt.Errorf("registry fault: server %d runs no configured Talos node; start it with its machine config first", serverID)
	}

	if tc := c.clusters[n.cfg.clusterID]; tc == nil || tc.real == nil {
		return fmt.Errorf("registry fault: the Talos cluster of server %d runs no Kubernetes control plane yet; bootstrap etcd first", serverID)
	}

	c.pulls.set(serverID, f)

	return nil
}

// kubeletPullError is the container runtime's answer to n's kubelet
// pulling an image: it records whether n's routes give it IPv4 egress
// now and answers from the faults as they are at each pull. Called with
// cluster.mu held (it reads n's routes).
func (n *Node) kubeletPullError() func(image string) string {
	id := n.opts.ServerID
	n.cluster.pulls.setNoIPv4(id, !n.hasIPv4Default())

	return func(image string) string { return n.cluster.pulls.pullError(id, image) }
}

func (r *registryFaults) set(serverID int64, f RegistryFault) {
	r.mu.Lock()
	defer r.mu.Unlock()

	putServer(&r.byServer, serverID, f)
}

func (r *registryFaults) setNoIPv4(serverID int64, noIPv4 bool) {
	r.mu.Lock()
	defer r.mu.Unlock()

	putServer(&r.noIPv4, serverID, noIPv4)
}

// putServer sets (*m)[serverID], making the map on first use.
func putServer[V any](m *map[int64]V, serverID int64, v V) {
	if *m == nil {
		*m = map[int64]V{}
	}

	(*m)[serverID] = v
}

// pullError is containerd's error pulling img on the server, "" when the
// pull succeeds.
func (r *registryFaults) pullError(serverID int64, img string) string {
	r.mu.Lock()
	f := r.byServer[serverID]
	noIPv4 := f.NoIPv4 || r.noIPv4[serverID]
	r.mu.Unlock()

	registry, repo, ref := imageRef(img)
	host := registry

	if registry == "docker.io" {
		host = "registry-1.docker.io" // containerd's default host for docker.io
	}

	sep := ":"
	if strings.Contains(ref, ":") {
		sep = "@" // a digest
	}

	named := registry + "/" + repo + sep + ref
	manifest := fmt.Sprintf("https://%s/v2/%s/manifests/%s", host, repo, ref)
	prefix := fmt.Sprintf("rpc error: code = Unknown desc = failed to pull and unpack image %q: failed to resolve reference %q: ", named, named)

	for _, fr := range f.Forbidden {
		if fr == registry {
			return prefix + "unexpected status from HEAD request to " + manifest + ": 403 Forbidden"
		}
	}

	if ip, ok := ipv4OnlyRegistries[registry]; ok && noIPv4 {
		return prefix + fmt.Sprintf("failed to do request: Head %q: dial tcp %s:443: connect: network is unreachable", manifest, ip)
	}

	return ""
}

// imageRef splits an image reference as the container runtime resolves
// it (distribution/reference ParseDockerRef): the registry (docker.io for
// a name without one, library/ for an official image), the repository,
// and the tag (latest when none) or digest the manifest is fetched by.
func imageRef(img string) (registry, repo, ref string) {
	name := img
	ref = "latest"

	if i := strings.LastIndex(name, "@"); i >= 0 {
		name, ref = name[:i], name[i+1:]
		if j := strings.LastIndex(name, ":"); j > strings.LastIndex(name, "/") {
			name = name[:j] // a tag beside a digest: the digest wins
		}
	} else if i := strings.LastIndex(name, ":"); i > strings.LastIndex(name, "/") {
		name, ref = name[:i], name[i+1:]
	}

	registry, repo = "docker.io", name
	if i := strings.Index(name, "/"); i > 0 && (strings.ContainsAny(name[:i], ".:") || name[:i] == "localhost") {
		registry, repo = name[:i], name[i+1:]
	} else if !strings.Contains(name, "/") {
		repo = "library/" + name
	}

	return registry, repo, ref
}
