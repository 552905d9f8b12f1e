package factory

import (
	"net/url"
	"strings"
)

// DiskImageURL returns the Hetzner Cloud disk image URL for a schematic ID,
// Talos version and architecture ("amd64" or "arm64"):
// BASE/image/ID/VERSION/hcloud-ARCH.raw.xz. An empty base means
// DefaultBaseURL.
func DiskImageURL(base, id, version, arch string) string {
	if base == "" {
		base = DefaultBaseURL
	}
	return strings.TrimRight(base, "/") + "/image/" + id + "/" + version + "/hcloud-" + arch + ".raw.xz"
}

// InstallerImage returns the Hetzner Cloud installer image reference used
// for upgrades: HOST/hcloud-installer/ID:VERSION. host may be a bare host
// ("factory.talos.dev") or a base URL, whose scheme and path are dropped; an
// empty host means the public factory.
func InstallerImage(host, id, version string) string {
	h := host
	if strings.Contains(h, "://") {
		if u, err := url.Parse(h); err == nil && u.Host != "" {
			h = u.Host
		}
	}
	h = strings.TrimRight(h, "/")
	if h == "" {
		h = strings.TrimPrefix(DefaultBaseURL, "https://")
	}
	return h + "/hcloud-installer/" + id + ":" + version
}
