// Package chartrepo serves the sandbox's Helm chart repositories: for
// each upstream repository ohmytalos installs add-ons from, an index.yaml
// and chart archives under <base>/<host>/<path>/, as a static chart
// repository (GitHub Pages, a bucket) serves them. The charts are
// stand-ins the project writes (charts/, embedded): the upstream names and
// pinned versions, the value keys ohmytalos sets with upstream's defaults,
// and templates rendering the objects the sandbox's simulated kubelets,
// cloud controller, CSI driver and Cilium operator key on. None is an
// upstream chart. See docs/sandbox.md.
package chartrepo

import (
	"embed"
	"fmt"
	"net/http"
	"sort"

	chart "helm.sh/helm/v4/pkg/chart/v2"
)

// charts holds one directory per stand-in chart (all: keeps _helpers.tpl).
//
//go:embed all:charts
var charts embed.FS

// Repository is one upstream chart repository the sandbox mirrors.
type Repository struct {
	// Path is the repository's URL without its scheme and trailing slash:
	// "helm.cilium.io", "kubernetes-sigs.github.io/metrics-server".
	Path string
	// Charts are the stand-in charts it holds (directories under charts/).
	Charts []string
}

// Repositories lists the mirrored repositories (HELM-DESIGN.md's table;
// the URLs as the upstream projects document them).
func Repositories() []Repository {
	return []Repository{
		{Path: "helm.cilium.io", Charts: []string{"cilium"}},
		{Path: "charts.hetzner.cloud", Charts: []string{"hcloud-cloud-controller-manager", "hcloud-csi"}},
		{Path: "charts.longhorn.io", Charts: []string{"longhorn"}},
		{Path: "kubernetes-sigs.github.io/metrics-server", Charts: []string{"metrics-server"}},
		{Path: "traefik.github.io/charts", Charts: []string{"traefik"}},
	}
}

// Chart is one packaged stand-in, as its repository's index lists it.
type Chart struct {
	Repository string // Repository.Path
	Name       string
	Version    string
	// File is the archive's name beside index.yaml ("cilium-1.19.6.tgz").
	File string
	// Digest is the archive's sha256 in hex, as the index's digest field.
	Digest  string
	Archive []byte

	meta *chart.Metadata
}

// Server serves the repositories. It is immutable once built.
type Server struct {
	// ready is closed once charts and files are packaged (err if that
	// failed): at once for New, in the background for Start.
	ready  chan struct{}
	err    error
	charts []Chart
	files  map[string]file // "/helm.cilium.io/index.yaml" -> body
}

type file struct {
	body        []byte
	contentType string
}

// New packages every stand-in (deterministically: the same bytes and
// digests on every run) and builds each repository's index.
func New() (*Server, error) {
	ready := make(chan struct{})
	close(ready)
	s := &Server{ready: ready, files: map[string]file{}}
	for _, r := range Repositories() {
		var pkgs []Chart
		for _, name := range r.Charts {
			c, err := pack(name)
			if err != nil {
				return nil, fmt.Errorf("sandbox chart repository %s: %w", r.Path, err)
			}
			c.Repository = r.Path
			pkgs = append(pkgs, c)
			s.files["/"+r.Path+"/"+c.File] = file{c.Archive, "application/gzip"}
		}
		idx, err := index(pkgs)
		if err != nil {
			return nil, fmt.Errorf("sandbox chart repository %s: index: %w", r.Path, err)
		}
		s.files["/"+r.Path+"/index.yaml"] = file{idx, "application/x-yaml"}
		s.charts = append(s.charts, pkgs...)
	}
	return s, nil
}

// Start is New in the background (packaging takes about 20 ms, off a
// sandbox's start): the methods wait for it, and ServeHTTP answers 500
// with the error if it failed.
func Start() *Server {
	s := &Server{ready: make(chan struct{})}
	go func() {
		defer close(s.ready)
		p, err := New()
		if err != nil {
			s.err = err
			return
		}
		s.charts, s.files = p.charts, p.files
	}()
	return s
}

// Err waits for the charts and says whether packaging them failed.
func (s *Server) Err() error {
	<-s.ready
	return s.err
}

// Charts lists the packaged stand-ins, by repository then name.
func (s *Server) Charts() []Chart {
	<-s.ready
	out := append([]Chart(nil), s.charts...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Repository != out[j].Repository {
			return out[i].Repository < out[j].Repository
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// Paths lists every path the server answers (relative to its base).
func (s *Server) Paths() []string {
	<-s.ready
	out := make([]string, 0, len(s.files))
	for p := range s.files {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// ServeHTTP answers as a static file host does: GET and HEAD of an index
// or an archive; 404 for anything else, directories included (no
// listings); 405 for other methods.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "405 method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if err := s.Err(); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	p := r.URL.Path
	f, ok := s.files[p]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", f.contentType)
	w.Header().Set("Content-Length", fmt.Sprint(len(f.body)))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(f.body)
	}
}
