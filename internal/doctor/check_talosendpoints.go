package doctor

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	clientconfig "github.com/siderolabs/talos/pkg/machinery/client/config"
)

// TalosAPIPort is apid's port, the default of a talosconfig endpoint
// without one.
const TalosAPIPort = "50000"

// talosProbeTimeout bounds the TCP connect and TLS handshake to one
// endpoint: a dropped SYN must not hold the check for the OS's minutes.
const talosProbeTimeout = 3 * time.Second

// checkTalosEndpoints verifies the talosconfig's current context: it has
// endpoints, none of them is the VIP (a VIP moves between control planes,
// and an upgrade through it hangs when its holder reboots: talos #11830),
// and each answers a TLS handshake on the Talos API from here.
func checkTalosEndpoints(ctx context.Context, env *Env) Result {
	if len(env.Talosconfig) == 0 {
		return skip("no talosconfig: the Talos client configuration is not available to the doctor")
	}
	cfg, err := clientconfig.FromBytes(env.Talosconfig)
	if err != nil {
		return Result{Status: StatusFail, Evidence: []string{"talosconfig: " + err.Error()},
			Explanation: "the talosconfig cannot be read, so talosctl cannot use it either",
			Fix:         "write a fresh one: ohmytalos talosconfig --out ~/.talos/config"}
	}
	name := cfg.Context
	tc := cfg.Contexts[name]
	if tc == nil {
		return Result{Status: StatusFail, Evidence: []string{fmt.Sprintf("talosconfig: current context %q is not defined", name)},
			Explanation: "talosctl reads the current context; without it every call fails",
			Fix:         "pick a defined context (talosctl config context NAME) or write a fresh talosconfig: ohmytalos talosconfig --out ~/.talos/config"}
	}
	if len(tc.Endpoints) == 0 {
		return Result{Status: StatusFail, Evidence: []string{fmt.Sprintf("talosconfig context %q has no endpoints", name)},
			Explanation: "without endpoints talosctl has nowhere to send a request: every call needs --endpoints, and tools reading the talosconfig fail",
			Fix:         "set the control planes' public addresses: talosctl config endpoint " + strings.Join(controlPlaneAddrs(env), " ")}
	}
	tlsCfg, err := talosTLS(tc)
	if err != nil {
		return Result{Status: StatusFail, Evidence: []string{fmt.Sprintf("talosconfig context %q: %v", name, err)},
			Explanation: "the talosconfig's credentials are unusable", Fix: "write a fresh one: ohmytalos talosconfig --out ~/.talos/config"}
	}
	var evidence, problems, fixes, why []string
	for _, ep := range tc.Endpoints {
		host, addr := talosEndpointAddr(ep)
		if env.VIP != "" && host == env.VIP {
			problems = append(problems, fmt.Sprintf("endpoint %s is the VIP", ep))
			fixes = append(fixes, "replace the VIP with the control planes' addresses: talosctl config endpoint "+strings.Join(controlPlaneAddrs(env), " "))
			why = append(why, "the VIP moves between control planes and is only reachable inside the network: an upgrade through it hangs when the node holding it reboots (talos #11830)")
			continue
		}
		start := time.Now()
		if err := probeTalos(ctx, env, addr, tlsCfg); err != nil {
			problems = append(problems, fmt.Sprintf("endpoint %s does not answer: %v", ep, err))
			fixes = append(fixes, "allow TCP "+TalosAPIPort+" from this machine's public address in the cluster firewall (firewall.allow: check the detected address has not changed), and check the node is running")
			why = append(why, "an endpoint that does not answer makes talosctl and ohmytalos time out: Hetzner's firewall drops what it does not admit, so a wrong or changed allowed address looks like a dead node")
			continue
		}
		evidence = append(evidence, fmt.Sprintf("endpoint %s answers a TLS handshake signed by the talosconfig's CA (%s)", ep, time.Since(start).Round(time.Millisecond)))
	}
	if len(problems) == 0 {
		return pass(evidence...)
	}
	return failed(problems, evidence,
		fmt.Sprintf("talosctl and ohmytalos reach the nodes through the endpoints of context %q; ", name)+strings.Join(uniq(why), "; "),
		strings.Join(uniq(fixes), "; "))
}

// talosEndpointAddr splits an endpoint ("ip", "ip:port", "[v6]:port")
// into its host and the address to dial, port 50000 by default.
func talosEndpointAddr(ep string) (host, addr string) {
	ep = strings.TrimPrefix(ep, "https://")
	if h, p, err := net.SplitHostPort(ep); err == nil {
		return h, net.JoinHostPort(h, p)
	}
	h := strings.Trim(ep, "[]")
	return h, net.JoinHostPort(h, TalosAPIPort)
}

// talosTLS is the client side of the Talos API's mutual TLS: the
// talosconfig's client certificate, and a server chain that must lead to
// its CA (the host name is not checked: endpoints are IPs).
func talosTLS(tc *clientconfig.Context) (*tls.Config, error) {
	ca, err := base64.StdEncoding.DecodeString(tc.CA)
	if err != nil || len(ca) == 0 {
		return nil, errors.New("the ca field is not base64 PEM")
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, errors.New("the ca field holds no certificate")
	}
	crt, err1 := base64.StdEncoding.DecodeString(tc.Crt)
	key, err2 := base64.StdEncoding.DecodeString(tc.Key)
	if err := errors.Join(err1, err2); err != nil {
		return nil, errors.New("the crt or key field is not base64")
	}
	pair, err := tls.X509KeyPair(crt, key)
	if err != nil {
		return nil, fmt.Errorf("client certificate: %w", err)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{pair}, NextProtos: []string{"h2"}, MinVersion: tls.VersionTLS12,
		InsecureSkipVerify: true, //nolint:gosec // the chain is verified below against the talosconfig's CA
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			return verifyChain(raw, pool)
		},
	}, nil
}

func verifyChain(raw [][]byte, roots *x509.CertPool) error {
	if len(raw) == 0 {
		return errors.New("the server sent no certificate")
	}
	certs := make([]*x509.Certificate, 0, len(raw))
	for _, r := range raw {
		c, err := x509.ParseCertificate(r)
		if err != nil {
			return fmt.Errorf("server certificate: %w", err)
		}
		certs = append(certs, c)
	}
	inter := x509.NewCertPool()
	for _, c := range certs[1:] {
		inter.AddCert(c)
	}
	if _, err := certs[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		return fmt.Errorf("the server's certificate is not signed by the talosconfig's CA (another cluster's node?): %w", err)
	}
	return nil
}

// probeTalos connects to addr and completes a TLS handshake.
func probeTalos(ctx context.Context, env *Env, addr string, cfg *tls.Config) error {
	ctx, cancel := context.WithTimeout(ctx, talosProbeTimeout)
	defer cancel()
	conn, err := env.dial(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("tcp connect: %w", err)
	}
	defer func() { _ = conn.Close() }()
	tconn := tls.Client(conn, cfg)
	if err := tconn.HandshakeContext(ctx); err != nil {
		return fmt.Errorf("tls handshake: %w", err)
	}
	return nil
}

// controlPlaneAddrs lists the control planes' public addresses (the
// addresses talosctl reaches from outside), else their private ones.
func controlPlaneAddrs(env *Env) []string {
	var out []string
	for _, n := range env.ControlPlanes {
		if n.PublicIP != "" {
			out = append(out, n.PublicIP)
		} else if n.PrivateIP != "" {
			out = append(out, n.PrivateIP)
		}
	}
	if len(out) == 0 {
		return []string{"<control plane public IPs>"}
	}
	return out
}
