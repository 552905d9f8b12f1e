package doctor

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/ohmytalos/ohmytalos/internal/kube"
)

// kubeProbeTimeout bounds each server's dial, handshake and /version call.
const kubeProbeTimeout = 8 * time.Second

// kubeProbe is one context's server and client-go's configuration for
// it (client certificates, tokens, exec and auth-provider plugins).
type kubeProbe struct {
	context, server string
	current         bool
	rest            *rest.Config
}

// probes resolves every context of a kubeconfig, the current one first,
// through the product's one kubeconfig reader (internal/kube, clientcmd).
func probes(data []byte) ([]kubeProbe, error) {
	ctxs, err := kube.Kubeconfig{Data: data}.Contexts()
	if err != nil {
		return nil, fmt.Errorf("the kubeconfig does not load: %w", err)
	}
	if len(ctxs) == 0 {
		return nil, errors.New("the kubeconfig has no context")
	}
	out := make([]kubeProbe, 0, len(ctxs))
	for _, c := range ctxs {
		out = append(out, kubeProbe{context: c.Name, current: c.Current, server: c.Server, rest: c.REST})
	}
	return out, nil
}

// kubeFailure is why a server could not be used, for the operator.
type kubeFailure struct {
	explanation, fix string
}

// checkKubeconfigReachable dials every server the stored kubeconfig names,
// verifies the API server's certificate against the kubeconfig's CA (and
// the address against its SANs), and calls /version with the kubeconfig's
// credentials: the same path kubectl takes from the operator's machine.
// Talos returns the private VIP as the server, which a laptop cannot reach.
func checkKubeconfigReachable(ctx context.Context, env *Env) Result {
	if len(env.Kubeconfig) == 0 {
		return skip("no kubeconfig: nothing to dial")
	}
	ps, err := probes(env.Kubeconfig)
	if err != nil {
		return Result{Status: StatusFail, Explanation: err.Error(), Fix: "fetch the kubeconfig again: ohmytalos apply --only bootstrap"}
	}
	var evidence, explanations, fixes []string
	currentFailed, othersFailed := false, 0
	for _, p := range ps {
		version, fail := probeKube(ctx, env, p)
		label := fmt.Sprintf("context %s (%s)", p.context, p.server)
		if fail == nil {
			evidence = append(evidence, fmt.Sprintf("%s: certificate verified, /version %s", label, version))
			continue
		}
		evidence = append(evidence, label+": "+fail.explanation)
		explanations = append(explanations, label+": "+fail.explanation)
		if !containsString(fixes, fail.fix) {
			fixes = append(fixes, fail.fix)
		}
		if p.current {
			currentFailed = true
		} else {
			othersFailed++
		}
	}
	switch {
	case currentFailed:
		return Result{Status: StatusFail, Evidence: evidence, Explanation: strings.Join(explanations, "\n"), Fix: strings.Join(fixes, "\n")}
	case othersFailed > 0:
		return Result{Status: StatusWarn, Evidence: evidence,
			Explanation: "the current context works, but not every alternative context: " + strings.Join(explanations, "\n"),
			Fix:         strings.Join(fixes, "\n")}
	}
	return pass(evidence...)
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// probeKube dials one server, verifies TLS and calls /version.
func probeKube(ctx context.Context, env *Env, p kubeProbe) (string, *kubeFailure) {
	u, err := url.Parse(p.server)
	if err != nil || u.Scheme != "https" || u.Hostname() == "" {
		return "", &kubeFailure{fmt.Sprintf("server %q is not an https:// URL", p.server), "fetch the kubeconfig again: ohmytalos apply --only bootstrap"}
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "443"
	}
	ctx, cancel := context.WithTimeout(ctx, kubeProbeTimeout)
	defer cancel()
	conn, err := env.dial(ctx, "tcp", net.JoinHostPort(host, port))
	if err != nil {
		return "", dialFailure(host, port, err)
	}
	defer conn.Close()
	cfg, err := rest.TLSConfigFor(p.rest)
	if err != nil {
		return "", &kubeFailure{"the kubeconfig's TLS settings do not load: " + err.Error(), "fetch the kubeconfig again: ohmytalos apply --only bootstrap"}
	}
	if cfg == nil {
		cfg = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	if cfg.ServerName == "" {
		cfg.ServerName = host
	}
	tc := tls.Client(conn, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		return "", tlsFailure(host, err)
	}
	return versionCall(ctx, env, p.rest)
}

// versionCall sends GET /version with client-go on the kubeconfig's
// credentials (plugins run as kubectl runs them), over the doctor's dialer.
func versionCall(ctx context.Context, env *Env, rc *rest.Config) (string, *kubeFailure) {
	cfg := rest.CopyConfig(rc)
	cfg.Dial = env.dial
	cfg.Timeout = kubeProbeTimeout
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return "", &kubeFailure{"the kubeconfig's credentials do not load: " + err.Error(), "fetch the kubeconfig again: ohmytalos apply --only bootstrap"}
	}
	body, err := dc.RESTClient().Get().AbsPath("/version").Do(ctx).Raw()
	var st apierrors.APIStatus
	switch {
	case apierrors.IsUnauthorized(err):
		return "", &kubeFailure{"the API server rejected the kubeconfig's credentials (401): the client certificate is not from this cluster's CA, or it expired",
			"fetch a fresh kubeconfig: ohmytalos apply --only bootstrap (or talosctl kubeconfig)"}
	case errors.As(err, &st):
		return "", &kubeFailure{fmt.Sprintf("/version answered %d %s", st.Status().Code, http.StatusText(int(st.Status().Code))),
			"check the API server: talosctl service kube-apiserver; ohmytalos doctor --check etcd"}
	case err != nil:
		return "", &kubeFailure{"the TLS handshake worked but /version failed: " + err.Error(),
			"check that kube-apiserver runs on the control planes (ohmytalos doctor --check etcd, or talosctl service kube-apiserver); " +
				"with an exec or auth-provider plugin, check that the plugin runs here"}
	}
	var v struct {
		GitVersion string `json:"gitVersion"`
	}
	if err := json.Unmarshal(body, &v); err != nil || v.GitVersion == "" {
		return "", &kubeFailure{"/version did not answer Kubernetes' version object: something else listens there",
			"check that the address in the kubeconfig is the cluster's API (a control plane's public address, the API load balancer, or the VIP)"}
	}
	return v.GitVersion, nil
}

// dialFailure explains a failed TCP connection: a private address that
// this machine cannot route to, a firewall that drops the packets, or
// nothing listening.
func dialFailure(host, port string, err error) *kubeFailure {
	addr, _ := netip.ParseAddr(host)
	private := addr.IsValid() && (addr.IsPrivate() || netip.MustParsePrefix("100.64.0.0/10").Contains(addr))
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return &kubeFailure{fmt.Sprintf("nothing listens on %s port %s (connection refused)", host, port),
			"the API server is down or the address is not a control plane's: ohmytalos doctor --check etcd; talosctl service kube-apiserver"}
	case private:
		return &kubeFailure{fmt.Sprintf("%s is a private address that this machine does not reach (%v)", host, err),
			"use the control planes' public addresses (endpoint.access: public, the default) and run ohmytalos apply --only bootstrap; " +
				"or, with endpoint.access: tailscale, join the tailnet and approve the control planes' subnet route in the Tailscale admin console (docs/access.md)"}
	case isTimeout(err):
		return &kubeFailure{fmt.Sprintf("no answer from %s:%s within %s: a firewall drops the connection", host, port, kubeProbeTimeout),
			"the Hetzner firewall admits only firewall.allow, or your address detected at the last apply: if your address changed, ohmytalos plan shows the firewall update and ohmytalos apply sets it"}
	}
	return &kubeFailure{fmt.Sprintf("cannot connect to %s:%s: %v", host, port, err),
		"check this machine's network route to the address; ohmytalos doctor --check lb-targets for a load balancer"}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// tlsFailure explains a failed handshake: the address is not among the
// certificate's SANs, or another CA signed it.
func tlsFailure(host string, err error) *kubeFailure {
	var he x509.HostnameError
	var ua x509.UnknownAuthorityError
	var ci x509.CertificateInvalidError
	switch {
	case errors.As(err, &he):
		var sans []string
		if he.Certificate != nil {
			for _, ip := range he.Certificate.IPAddresses {
				sans = append(sans, ip.String())
			}
			sans = append(sans, he.Certificate.DNSNames...)
		}
		return &kubeFailure{fmt.Sprintf("the API server certificate is not valid for %s (its SANs: %s)", host, strings.Join(sans, ", ")),
			"add the address to cluster.apiServer.certSANs (ohmytalos lists the control planes' public addresses once bootstrap recorded them) and apply the config, or use an address among the SANs"}
	case errors.As(err, &ua):
		return &kubeFailure{"the API server certificate is not signed by the kubeconfig's CA: another cluster answers at this address, or the kubeconfig is stale",
			"fetch the kubeconfig again: ohmytalos apply --only bootstrap"}
	case errors.As(err, &ci):
		return &kubeFailure{"the API server certificate is invalid: " + ci.Error(),
			"check the control planes' clocks and certificates: talosctl get certsans; ohmytalos doctor"}
	case isTimeout(err):
		return &kubeFailure{"the TLS handshake timed out: something accepts connections but does not answer TLS",
			"check that the address is the cluster's API server"}
	}
	return &kubeFailure{"the TLS handshake failed: " + err.Error(), "check that the address is the cluster's API server"}
}
