// Package factoryfake is a stateful fake of the Talos Image Factory HTTP API
// for tests and the sandbox: it registers schematics with its own model of
// the factory's canonical form and ID (schematic.go), lists versions and
// official extensions, and
// serves small but valid .xz disk images, so the real factory client and the
// imaging step run unchanged against it.
package factoryfake

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// Extension is one official system extension as GET
// /version/{v}/extensions/official lists it.
type Extension struct {
	Name        string `json:"name"`
	Ref         string `json:"ref"`
	Digest      string `json:"digest"`
	Author      string `json:"author,omitempty"`
	Description string `json:"description,omitempty"`
}

// Versions returns the Talos versions the fake factory offers, oldest first
// like factory.talos.dev.
func Versions() []string {
	return []string{"v1.11.5", "v1.12.0", "v1.12.6", "v1.13.0", "v1.13.9"}
}

// ImageSize is the uncompressed size of the fake disk images.
const ImageSize = 64 << 10

// maxSchematic caps a POST /schematics body, like the factory's request limit.
const maxSchematic = 1 << 20

var (
	idPattern      = regexp.MustCompile(`^[0-9a-f]{64}$`)
	imagePattern   = regexp.MustCompile(`^/image/([^/]+)/([^/]+)/hcloud-(amd64|arm64)\.raw\.xz$`)
	extensionsPath = regexp.MustCompile(`^/version/([^/]+)/extensions/official$`)
)

// Fake is the fake Image Factory. The zero value is not usable: call New.
type Fake struct {
	mu         sync.Mutex
	schematics map[string][]byte // ID -> canonical YAML
	requests   int
}

// New returns a fake factory that already knows the empty schematic, as the
// public factory does.
func New() *Fake {
	f := &Fake{schematics: map[string][]byte{}}
	if data, id, err := (&schematicDoc{}).canonical(); err == nil {
		f.schematics[id] = data
	}
	return f
}

// Requests returns how many requests the fake has served.
func (f *Fake) Requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests
}

// Schematic returns the canonical YAML of a registered schematic.
func (f *Fake) Schematic(id string) ([]byte, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	data, ok := f.schematics[id]
	return bytes.Clone(data), ok
}

// ServeHTTP implements the factory's HTTP API subset ohmytalos uses.
func (f *Fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests++
	f.mu.Unlock()

	p := r.URL.Path
	switch {
	case p == "/schematics":
		if r.Method != http.MethodPost {
			methodNotAllowed(w, http.MethodPost)
			return
		}
		f.register(w, r)
	case strings.HasPrefix(p, "/schematics/"):
		if !isGet(r) {
			methodNotAllowed(w, http.MethodGet)
			return
		}
		data, ok := f.Schematic(strings.TrimPrefix(p, "/schematics/"))
		if !ok {
			http.Error(w, "schematic not found", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/yaml")
		_, _ = w.Write(data)
	case p == "/versions":
		if !isGet(r) {
			methodNotAllowed(w, http.MethodGet)
			return
		}
		writeJSON(w, Versions())
	case extensionsPath.MatchString(p):
		if !isGet(r) {
			methodNotAllowed(w, http.MethodGet)
			return
		}
		v := extensionsPath.FindStringSubmatch(p)[1]
		if !strings.HasPrefix(v, "v") {
			v = "v" + v // the factory accepts both spellings
		}
		if !slices.Contains(Versions(), v) {
			http.Error(w, "version not found", http.StatusNotFound)
			return
		}
		writeJSON(w, officialExtensions(v))
	case imagePattern.MatchString(p):
		if !isGet(r) {
			methodNotAllowed(w, http.MethodGet)
			return
		}
		m := imagePattern.FindStringSubmatch(p)
		f.serveImage(w, r, m[1], m[2], m[3])
	default:
		http.NotFound(w, r)
	}
}

func (f *Fake) register(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxSchematic+1))
	if err != nil {
		http.Error(w, "read body: "+err.Error(), http.StatusBadRequest)
		return
	}
	if len(body) > maxSchematic {
		http.Error(w, "schematic too large", http.StatusRequestEntityTooLarge)
		return
	}
	s, err := parseSchematic(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	data, id, err := s.canonical()
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.schematics[id] = data
	f.mu.Unlock()

	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_ = json.NewEncoder(w).Encode(map[string]string{"id": id})
}

func (f *Fake) serveImage(w http.ResponseWriter, r *http.Request, id, version, arch string) {
	if !idPattern.MatchString(id) {
		http.Error(w, "invalid schematic ID", http.StatusBadRequest)
		return
	}
	if _, ok := f.Schematic(id); !ok {
		http.Error(w, "schematic not found", http.StatusNotFound)
		return
	}
	if !slices.Contains(Versions(), version) {
		http.Error(w, "version not found", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/x-xz")
	http.ServeContent(w, r, "hcloud-"+arch+".raw.xz", time.Time{}, bytes.NewReader(xzStore(DiskImage(id, version, arch))))
}

// DiskImage returns the uncompressed content of the fake disk image for a
// schematic, version and architecture: a text header naming them, padded
// with zeros to ImageSize. Tests compare a decompressed download against it.
func DiskImage(id, version, arch string) []byte {
	img := make([]byte, ImageSize)
	copy(img, fmt.Sprintf(diskMagic+"schematic=%s\nversion=%s\narch=%s\n", id, version, arch))
	return img
}

// officialExtensions returns a realistic list of official extensions for a
// Talos version, shaped like the factory's answer.
func officialExtensions(version string) []Extension {
	type ext struct{ name, tag, desc string }
	list := []ext{
		{"siderolabs/amd-ucode", "20251111", "This system extension provides AMD microcode binaries."},
		{"siderolabs/intel-ucode", "20251111", "This system extension provides Intel microcode binaries."},
		{"siderolabs/iscsi-tools", "v0.2.0", "This system extension provides iscsi-tools."},
		{"siderolabs/nvidia-container-toolkit-production", "580.95.05-v1.18.0", "This system extension provides NVIDIA container toolkit binaries."},
		{"siderolabs/nvidia-open-gpu-kernel-modules-production", "580.95.05-" + version, "This system extension provides NVIDIA open GPU kernel modules."},
		{"siderolabs/qemu-guest-agent", "10.1.2", "This system extension provides the QEMU guest agent."},
		{"siderolabs/tailscale", "1.90.6", "This system extension provides Tailscale."},
		{"siderolabs/util-linux-tools", "2.41.2", "This system extension provides util-linux tools."},
	}
	out := make([]Extension, 0, len(list))
	for _, e := range list {
		ref := "ghcr.io/" + e.name + ":" + e.tag
		sum := sha256.Sum256([]byte(ref))
		out = append(out, Extension{
			Name:        e.name,
			Ref:         ref,
			Digest:      "sha256:" + hex.EncodeToString(sum[:]),
			Author:      "Sidero Labs",
			Description: e.desc,
		})
	}
	return out
}

func isGet(r *http.Request) bool { return r.Method == http.MethodGet || r.Method == http.MethodHead }

func methodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
