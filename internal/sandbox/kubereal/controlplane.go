package kubereal

import (
	"context"
	"crypto/tls"
	stdx509 "crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// Timeouts of the start: etcd answers in seconds; kube-apiserver installs
// its bootstrap objects (RBAC, priority classes, the API services) first,
// which takes tens of seconds on a loaded machine.
const (
	etcdReadyTimeout      = time.Minute
	apiServerReadyTimeout = 3 * time.Minute
	stopGrace             = 10 * time.Second
)

// ControlPlane is a running etcd, kube-apiserver, kube-controller-manager
// and kube-scheduler.
type ControlPlane struct {
	// URL is kube-apiserver's loopback URL (https://127.0.0.1:PORT), and
	// Addr its host:port.
	URL, Addr string

	cfg   Config
	procs []*process // in start order
	once  sync.Once
	done  chan struct{}
	trace trace
}

// Process names one running program.
type Process struct {
	Name string
	PID  int
}

// Start runs the control plane and returns once kube-apiserver is ready.
// Cancelling ctx stops every process, as Stop does.
func Start(ctx context.Context, cfg Config) (*ControlPlane, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}

	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}

	p, err := freePorts()
	if err != nil {
		return nil, err
	}

	c := &ControlPlane{cfg: cfg, done: make(chan struct{}),
		Addr: fmt.Sprintf("127.0.0.1:%d", p.apiServer)}
	c.URL = "https://" + c.Addr

	began := time.Now()
	if err := c.start(ctx, p, began); err != nil {
		c.Stop()

		return nil, err
	}

	go c.measureControllers(ctx, began)

	go func() {
		select {
		case <-ctx.Done():
			c.Stop()
		case <-c.done:
		}
	}()

	return c, nil
}

func (c *ControlPlane) start(ctx context.Context, p ports, began time.Time) error {
	pki, err := c.cfg.writePKI(c.URL)
	if err != nil {
		return err
	}

	admission, err := c.cfg.writeAdmissionConfig()
	if err != nil {
		return err
	}

	encryption, err := c.cfg.writeEncryptionConfig()
	if err != nil {
		return err
	}

	b := c.cfg.Binaries

	etcd, err := c.run(ctx, "etcd", etcdArgs(c.cfg.Dir, p))
	if err != nil {
		return err
	}

	if err := waitHealthy(ctx, etcd, fmt.Sprintf("http://127.0.0.1:%d/health", p.etcdClient), http.DefaultClient, etcdReadyTimeout); err != nil {
		return err
	}

	api, err := c.run(ctx, "kube-apiserver", c.cfg.apiServerArgs(pki, admission, encryption, p))
	if err != nil {
		return err
	}

	admin, err := c.httpClient("ohmytalos-sandbox:health", "system:masters")
	if err != nil {
		return err
	}

	if err := waitHealthy(ctx, api, c.URL+"/readyz", admin, apiServerReadyTimeout); err != nil {
		return err
	}

	c.trace.mu.Lock()
	c.trace.apiReady = time.Since(began)
	c.trace.mu.Unlock()

	if _, err := c.run(ctx, "kube-controller-manager", c.cfg.controllerManagerArgs(pki, p)); err != nil {
		return err
	}

	if _, err := c.run(ctx, "kube-scheduler", c.cfg.schedulerArgs(p)); err != nil {
		return err
	}

	c.cfg.Log.Info("real kubernetes control plane ready", "url", c.URL, "version", b.Version)

	return nil
}

// run starts the named program once its binary is verified: the one the
// cache recorded at its build (kubebin.Binaries.Verify rebuilds one that
// is not, and a failure names it), or the user's, checked again once it
// changed.
func (c *ControlPlane) run(ctx context.Context, name string, args []string) (*process, error) {
	bin, rebuilt, err := c.cfg.Binaries.Verify(ctx, name)
	if err != nil {
		return nil, err
	}

	if rebuilt != "" {
		c.cfg.Log.Warn(rebuilt)
	}

	p, err := startProcess(c.cfg.Dir, name, bin, args)
	if err != nil {
		return nil, err
	}

	c.procs = append(c.procs, p)

	return p, nil
}

// waitHealthy polls url until it answers 200, the process ends, or the
// timeout passes.
func waitHealthy(ctx context.Context, p *process, url string, client *http.Client, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)

	var last string

	for {
		if ok, _ := p.exited(); ok {
			return p.exitError()
		}

		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}

		resp, err := client.Do(req)
		if err == nil {
			_ = resp.Body.Close()

			if resp.StatusCode == http.StatusOK {
				return nil
			}

			last = resp.Status
		} else {
			last = err.Error()
		}

		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not become ready within %s (last answer from %s: %s); its log %s ends with:\n%s",
				p.name, timeout, url, last, p.log, p.logTail())
		}

		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for %s: %w", p.name, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// ClientCert issues a client certificate from the cluster's CA for user cn
// in groups orgs: kube-apiserver authenticates it as that user, as it does
// the admin kubeconfig Talos issues (CN admin, O system:masters).
func (c *ControlPlane) ClientCert(cn string, orgs ...string) (certPEM, keyPEM []byte, err error) {
	kp, err := issue(c.cfg.CA, cn, orgs, false, nil, nil)
	if err != nil {
		return nil, nil, err
	}

	return kp.CrtPEM, kp.KeyPEM, nil
}

// CACert is the cluster CA's certificate (PEM), which the serving
// certificate chains to.
func (c *ControlPlane) CACert() []byte { return c.cfg.CA.Crt }

func (c *ControlPlane) httpClient(cn string, orgs ...string) (*http.Client, error) {
	crt, key, err := c.ClientCert(cn, orgs...)
	if err != nil {
		return nil, err
	}

	pair, err := tls.X509KeyPair(crt, key)
	if err != nil {
		return nil, err
	}

	pool := stdx509.NewCertPool()
	if !pool.AppendCertsFromPEM(c.cfg.CA.Crt) {
		return nil, errors.New("kubereal: the cluster CA certificate is not PEM")
	}

	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		MinVersion: tls.VersionTLS12, RootCAs: pool, Certificates: []tls.Certificate{pair},
	}}}, nil
}

// Processes are the running programs, in start order.
func (c *ControlPlane) Processes() []Process {
	out := make([]Process, 0, len(c.procs))
	for _, p := range c.procs {
		out = append(out, Process{Name: p.name, PID: p.cmd.Process.Pid})
	}

	return out
}

// Err reports the first program that ended on its own, or nil while all run.
func (c *ControlPlane) Err() error {
	for _, p := range c.procs {
		if ok, _ := p.exited(); ok {
			return p.exitError()
		}
	}

	return nil
}

// Stop ends every program, last started first, and waits for them.
func (c *ControlPlane) Stop() {
	c.once.Do(func() {
		for i := len(c.procs) - 1; i >= 0; i-- {
			c.procs[i].stop(stopGrace)
		}

		close(c.done)
	})
}

// Done is closed once Stop has ended every program.
func (c *ControlPlane) Done() <-chan struct{} { return c.done }

// SetServingNames reissues the serving certificate with more addresses
// (a control plane that joined); kube-apiserver reloads it from disk.
func (c *ControlPlane) SetServingNames(ips []net.IP, dns []string) error {
	c.cfg.ServingIPs, c.cfg.ServingDNSNames = ips, dns
	names, addrs := c.cfg.servingNames()

	kp, err := issue(c.cfg.CA, "kube-apiserver", nil, true, names, addrs)
	if err != nil {
		return err
	}

	return writeServing(c.cfg.Dir, kp)
}

func freePorts() (ports, error) {
	var got []int

	var lns []net.Listener

	defer func() {
		for _, l := range lns {
			_ = l.Close()
		}
	}()

	for range 5 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return ports{}, fmt.Errorf("find a free loopback port for the control plane: %w", err)
		}

		lns = append(lns, l)
		got = append(got, l.Addr().(*net.TCPAddr).Port)
	}

	return ports{etcdClient: got[0], etcdPeer: got[1], apiServer: got[2], controllerManager: got[3], scheduler: got[4]}, nil
}

// Dir is the control plane's state directory (Config.Dir).
func (c *ControlPlane) Dir() string { return c.cfg.Dir }
