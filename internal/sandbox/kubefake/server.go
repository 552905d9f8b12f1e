package kubefake

import (
	"context"
	"crypto/x509"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/ingressstandin"
)

// Options configure a Server.
type Options struct {
	// Version is the Kubernetes version /version reports, e.g. "v1.35.0".
	Version string
	// ClientCAs authenticate client certificates (the cluster CA of the admin
	// kubeconfig). nil turns authentication off: every request is an admin's
	// (plain-HTTP tests only).
	ClientCAs *x509.CertPool
	// PodCIDRs are the cluster's pod subnets (cluster.network.podSubnets);
	// the node IPAM controller hands each node a /NodeCIDRMaskSize of the first.
	PodCIDRs []netip.Prefix
	// ServiceCIDRs are the service subnets (cluster.network.serviceSubnets):
	// Services get their cluster IP from the first; its first address is the
	// "kubernetes" Service's.
	ServiceCIDRs []netip.Prefix
	// NodeCIDRMaskSize is kube-controller-manager's --node-cidr-mask-size (default 24).
	NodeCIDRMaskSize int
	// HCloudEndpoint is the Hetzner API the simulated cloud controller talks
	// to ("" means the hcloud-go default, unreachable from tests).
	HCloudEndpoint string
	// HTTPClient is used for the Hetzner API (default http.DefaultClient).
	HTTPClient *http.Client
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Resync is how often the control loop runs without a change (default 1s).
	Resync time.Duration
}

// Server is an in-memory Kubernetes API server with a simulated control
// loop. It is an http.Handler; serve it over TLS with
// tls.RequestClientCert so that client certificates reach it.
type Server struct {
	opts     Options
	builtins []resource

	mu       sync.Mutex
	rv       uint64
	seq      uint64
	objs     map[string]map[string]obj // resource key -> "ns/name" -> object
	history  []event
	watchers map[*watcher]struct{}
	applied  map[string]map[string][]string // object uid -> apply manager -> owned field paths
	kubelets map[string]bool                // node name -> kubelet posting status
	// registryFaults and noIPv4 decide which image pulls fail per node;
	// pullFailures counts failed pulls per "podUID_image" (pulls.go).
	registryFaults map[string]RegistryFault
	noIPv4         map[string]bool
	pullFailures   map[string]int
	cloud          cloudState
	ingress        ingressstandin.Listeners // the Traefik stand-in (traefik.go)

	kick   chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
}

// New starts a server with the default namespaces and its control loop;
// Close stops the loop.
func New(o Options) *Server {
	if o.Now == nil {
		o.Now = time.Now
	}

	if o.Resync <= 0 {
		o.Resync = time.Second
	}

	if o.NodeCIDRMaskSize == 0 {
		o.NodeCIDRMaskSize = 24
	}

	if o.HTTPClient == nil {
		o.HTTPClient = http.DefaultClient
	}

	s := &Server{
		opts:     o,
		builtins: builtinResources(),
		objs:     map[string]map[string]obj{},
		watchers: map[*watcher]struct{}{},
		applied:  map[string]map[string][]string{},
		kubelets: map[string]bool{}, noIPv4: map[string]bool{}, pullFailures: map[string]int{},
		kick: make(chan struct{}, 1),
		done: make(chan struct{}),
	}

	s.mu.Lock()
	for _, ns := range []string{"default", "kube-system", "kube-public", "kube-node-lease"} {
		nsRes, _ := s.lookupLocked("", "v1", "namespaces") //nolint:errcheck // built in
		if _, err := s.createLocked(nsRes, "", obj{"metadata": obj{"name": ns}}, createOpts{}); err != nil {
			panic("kubefake: default namespace: " + err.Error())
		}
	}
	s.createAPIServiceLocked()
	s.mu.Unlock()

	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel

	go s.loop(ctx)

	return s
}

// Close stops the control loop and ends open watches.
func (s *Server) Close() {
	s.cancel()
	<-s.done
	s.closeIngress()

	s.mu.Lock()
	for w := range s.watchers {
		w.stop()
	}
	s.mu.Unlock()
}

func (s *Server) now() time.Time { return s.opts.Now().UTC() }

func (s *Server) timestamp() string { return s.now().Format(time.RFC3339) }

// ServeHTTP serves the Kubernetes API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	user, err := s.authenticate(r)
	if err != nil {
		writeErr(w, err)

		return
	}

	path := strings.TrimSuffix(r.URL.Path, "/")

	switch path {
	case "/version":
		s.serveVersion(w)

		return
	case "/healthz", "/livez", "/readyz":
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("ok")) //nolint:errcheck // the client went away

		return
	}

	if user == anonymous {
		writeErr(w, errForbidden(`forbidden: User "system:anonymous" cannot `+strings.ToLower(r.Method)+` path "`+r.URL.Path+`"`))

		return
	}

	if s.serveDiscovery(w, r, path) {
		return
	}

	s.serveResource(w, r, path)
}

const anonymous = "system:anonymous"

// authenticate returns the user of a request: the client certificate's
// common name, or system:anonymous without one; a certificate that does
// not verify against the client CAs is 401, as kube-apiserver's x509
// authenticator answers.
func (s *Server) authenticate(r *http.Request) (string, error) {
	if s.opts.ClientCAs == nil {
		return "admin", nil
	}

	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return anonymous, nil
	}

	certs := r.TLS.PeerCertificates
	inter := x509.NewCertPool()

	for _, c := range certs[1:] {
		inter.AddCert(c)
	}

	if _, err := certs[0].Verify(x509.VerifyOptions{
		Roots: s.opts.ClientCAs, Intermediates: inter,
		KeyUsages:   []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		CurrentTime: s.opts.Now(),
	}); err != nil {
		return "", &apiError{code: http.StatusUnauthorized, reason: "Unauthorized", message: "Unauthorized"}
	}

	return certs[0].Subject.CommonName, nil
}

func (s *Server) serveVersion(w http.ResponseWriter) {
	v := s.opts.Version
	major, minor := "", ""

	if parts := strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3); len(parts) >= 2 {
		major, minor = parts[0], parts[1]
	}

	writeJSON(w, http.StatusOK, map[string]string{
		"major": major, "minor": minor, "gitVersion": v, "gitTreeState": "clean",
		"goVersion": "go1.25", "compiler": "gc", "platform": "linux/amd64",
	})
}
