package doctor

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/kube"
)

// kubeProbeTimeout bounds each server's dial, handshake and /version call.
const kubeProbeTimeout = 8 * time.Second

// kubeProbe is one context's server and the credentials to call it with.
type kubeProbe struct {
	context, server, serverName string
	current                     bool
	ca                          *x509.CertPool
	cert                        *tls.Certificate
	token                       string
}

// probes resolves every context of a kubeconfig, the current one first,
// through the product's one kubeconfig reader (internal/kube).
func probes(data []byte) ([]kubeProbe, error) {
	names, current, err := kube.Contexts(data)
	if err != nil {
		return nil, fmt.Errorf("the kubeconfig does not parse: %w", err)
	}
	if len(names) == 0 {
		return nil, errors.New("the kubeconfig has no context")
	}
	out := make([]kubeProbe, 0, len(names))
	for _, name := range names {
		ep, err := kube.ParseKubeconfig(data, name, "")
		if err != nil {
			return nil, err
		}
		p := kubeProbe{context: name, current: name == current, server: ep.Server,
			serverName: ep.TLS.ServerName, ca: ep.TLS.RootCAs, token: ep.Token}
		if len(ep.TLS.Certificates) > 0 {
			p.cert = &ep.TLS.Certificates[0]
		}
		out = append(out, p)
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
	name := p.serverName
	if name == "" {
		name = host
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: p.ca, ServerName: name}
	if p.cert != nil {
		cfg.Certificates = []tls.Certificate{*p.cert}
	}
	tc := tls.Client(conn, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		return "", tlsFailure(host, err)
	}
	return versionCall(ctx, tc, u, p.token)
}

// versionCall sends GET /version over the verified connection.
func versionCall(ctx context.Context, tc *tls.Conn, u *url.URL, token string) (string, *kubeFailure) {
	used := false
	client := &http.Client{Transport: &http.Transport{
		DialTLSContext: func(context.Context, string, string) (net.Conn, error) {
			if used {
				return nil, errors.New("connection already used")
			}
			used = true
			return tc, nil
		},
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(u.String(), "/")+"/version", nil)
	if err != nil {
		return "", &kubeFailure{err.Error(), "fetch the kubeconfig again: ohmytalos apply --only bootstrap"}
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", &kubeFailure{"the TLS handshake worked but /version failed: " + err.Error(),
			"check that kube-apiserver runs on the control planes: ohmytalos doctor --check etcd, or talosctl service kube-apiserver"}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusUnauthorized:
		return "", &kubeFailure{"the API server rejected the kubeconfig's credentials (401): the client certificate is not from this cluster's CA, or it expired",
			"fetch a fresh kubeconfig: ohmytalos apply --only bootstrap (or talosctl kubeconfig)"}
	default:
		return "", &kubeFailure{fmt.Sprintf("/version answered %s", resp.Status),
			"check the API server: talosctl service kube-apiserver; ohmytalos doctor --check etcd"}
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
