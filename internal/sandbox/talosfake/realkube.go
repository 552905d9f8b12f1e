package talosfake

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/siderolabs/talos/pkg/machinery/config/configloader"
	"k8s.io/client-go/kubernetes"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubereal"
)

// realKube is a Talos cluster's real Kubernetes control plane
// (ClusterOptions.RealKubernetes): one etcd and one kube-apiserver for the
// cluster, which every control plane's PublicIP:6443 forwards to, TLS and
// all, so clients verify its serving certificate and it authenticates
// their certificates itself.
type realKube struct {
	cluster  *Cluster
	ready    chan struct{} // closed once cp or err is set
	stopOnce sync.Once

	mu       sync.Mutex
	cp       *kubereal.ControlPlane
	err      error
	ips      []net.IP
	dns      []string
	kubelets map[string]*kubereal.Kubelet
	// applied is what each running kubelet registered and what Talos'
	// node controllers last set on its Node; crds the CRDs installed.
	applied map[string]realKubelet
	crds    map[string]bool
	admin   *kubernetes.Clientset
	cloud   *kubereal.CloudController
	cilium  *kubereal.CiliumOperator
	sims    *kubereal.Simulators // CCM service and route controllers, CSI driver
	// syncs counts kubelet syncs asked for (under cluster.mu); synced is
	// the latest applied, so a stale sync never undoes a newer one.
	syncs, synced uint64
}

// realKubeReadyTimeout bounds how long a client connection waits for the
// control plane to start.
const realKubeReadyTimeout = 3 * time.Minute

// realKubeLocked returns the cluster's real control plane, starting it
// (in the background: it takes seconds) from n's machine config the first
// time. Called with cluster.mu held.
func (c *Cluster) realKubeLocked(n *Node) *realKube {
	tc := c.clusterLocked(n.cfg)
	if tc.real != nil {
		return tc.real
	}

	rk := &realKube{cluster: c, ready: make(chan struct{}), kubelets: map[string]*kubereal.Kubelet{},
		applied: map[string]realKubelet{}, crds: map[string]bool{}}
	tc.real = rk
	c.reals = append(c.reals, rk)

	cfg, err := realKubeConfig(n, c.opts)
	if err != nil {
		rk.err = err
		close(rk.ready)

		return rk
	}

	go rk.start(c.ctx, cfg, tc.name)

	return rk
}

func (rk *realKube) start(ctx context.Context, cfg kubereal.Config, name string) {
	// The locked section that created rk adds the first control plane's
	// names: wait for it to end, then serve with them from the start.
	rk.cluster.mu.Lock()
	rk.cluster.mu.Unlock() //nolint:staticcheck // a barrier, not a critical section

	rk.mu.Lock()
	cfg.ServingIPs, cfg.ServingDNSNames = slices.Clone(rk.ips), slices.Clone(rk.dns)
	rk.mu.Unlock()

	// The binaries may still be building (kubebin.Start): the Talos side
	// works meanwhile, and clients of the API wait in pipe.
	bins, err := rk.cluster.opts.RealKubernetes(ctx)
	if err != nil {
		err = fmt.Errorf("the sandbox's Kubernetes binaries: %w", err)
	}

	var cp *kubereal.ControlPlane
	if err == nil {
		cfg.Binaries = bins
		cp, err = kubereal.Start(ctx, cfg)
	}

	rk.mu.Lock()
	rk.cp, rk.err = cp, err
	ips, dns := slices.Clone(rk.ips), slices.Clone(rk.dns)
	rk.mu.Unlock()

	// Control planes that joined while it started.
	if err == nil && (len(ips) != len(cfg.ServingIPs) || len(dns) != len(cfg.ServingDNSNames)) {
		if err := cp.SetServingNames(ips, dns); err != nil {
			rk.cluster.opts.Logger.Error("real kube-apiserver: reissue serving certificate", "err", err)
		}
	}

	if err != nil {
		rk.cluster.opts.Logger.Error("real kubernetes control plane did not start", "cluster", name, "err", err)
	}

	// The cilium-operator's CRD registration, once its pod runs.
	if err == nil {
		op, err := cp.StartCiliumOperator(ctx)

		rk.mu.Lock()
		rk.cilium = op
		rk.mu.Unlock()

		if err != nil {
			rk.cluster.opts.Logger.Error("simulated cilium-operator did not start", "cluster", name, "err", err)
		}
	}

	// The hcloud CCM's node controller, once its pod runs.
	if ep := rk.cluster.opts.HCloudEndpoint; err == nil && ep != "" {
		cc, err := cp.StartCloudController(ctx, ep)

		sims, serr := cp.StartSimulators(ctx, ep)

		rk.mu.Lock()
		rk.cloud, rk.sims = cc, sims
		rk.mu.Unlock()

		err = errors.Join(err, serr)

		if err != nil {
			rk.cluster.opts.Logger.Error("simulated cloud controller did not start", "cluster", name, "err", err)
		}
	}

	close(rk.ready)
}

// realKubeConfig is kubereal's configuration from the control plane's
// machine config: the cluster's CAs, service account key and secretbox
// secret, its endpoint, subnets and admission control.
func realKubeConfig(n *Node, o ClusterOptions) (kubereal.Config, error) {
	provider, err := configloader.NewFromBytes(n.cfg.raw)
	if err != nil {
		return kubereal.Config{}, fmt.Errorf("real kube-apiserver: load machine config: %w", err)
	}

	cl := provider.Cluster()

	dir, err := os.MkdirTemp(o.RealKubernetesDir, "kube-"+n.cfg.clusterID+"-")
	if err != nil {
		return kubereal.Config{}, fmt.Errorf("real kube-apiserver: state directory: %w", err)
	}

	cfg := kubereal.Config{
		Dir:               dir,
		CA:                cl.IssuingCA(),
		AggregatorCA:      cl.AggregatorCA(),
		ServiceAccountKey: cl.ServiceAccount(),
		SecretboxKey:      cl.SecretboxEncryptionSecret(),
		Admission:         kubereal.AdmissionFromTalos(cl.APIServer().AdmissionControl()),
		AdvertiseAddress:  n.opts.PrivateIP,
		Timing:            o.KubeTiming,
		Log:               o.Logger,
	}

	if ep := cl.Endpoint(); ep != nil {
		cfg.Endpoint = ep.String()
	}

	if nw := cl.Network(); nw != nil {
		cfg.ServiceCIDRs, cfg.PodCIDRs = nw.ServiceCIDRs(), nw.PodCIDRs()
	}

	return cfg, nil
}

// addNames puts a control plane's addresses into the serving certificate.
func (rk *realKube) addNames(ips []net.IP, dns []string) {
	rk.mu.Lock()
	for _, ip := range ips {
		if !slices.ContainsFunc(rk.ips, ip.Equal) {
			rk.ips = append(rk.ips, ip)
		}
	}

	for _, d := range dns {
		if !slices.Contains(rk.dns, d) {
			rk.dns = append(rk.dns, d)
		}
	}

	cp, allIPs, allDNS := rk.cp, slices.Clone(rk.ips), slices.Clone(rk.dns)
	rk.mu.Unlock()

	if cp != nil {
		if err := cp.SetServingNames(allIPs, allDNS); err != nil {
			rk.cluster.opts.Logger.Error("real kube-apiserver: reissue serving certificate", "err", err)
		}
	}
}

// serveRealKubeLocked is the last part of startRealKubeLocked: the
// node's PublicIP:6443 forwards connections to the cluster's
// kube-apiserver, and the kubelets of the cluster's nodes run against it.
// Called with cluster.mu held.
func (n *Node) serveRealKubeLocked(dns []string, ips []net.IP) {
	rk := n.cluster.realKubeLocked(n)
	rk.addNames(ips, dns)

	addr := net.JoinHostPort(n.opts.PublicIP, strconv.Itoa(KubernetesPort))

	inner, err := net.Listen("tcp", addr)
	if err != nil {
		n.kubeErr = fmt.Errorf("real kube-apiserver forwarder on %s: %w", addr, err)

		return
	}

	k := &kubeAPI{lis: n.admitPort(inner, KubernetesPort), done: make(chan struct{})}
	n.kube = k

	go func() {
		defer close(k.done)

		rk.forward(k.lis)
	}()
}

// forward copies each accepted connection to kube-apiserver's loopback
// port, once the control plane runs.
func (rk *realKube) forward(lis net.Listener) {
	for {
		conn, err := lis.Accept()
		if err != nil {
			return
		}

		go rk.pipe(conn)
	}
}

func (rk *realKube) pipe(conn net.Conn) {
	defer conn.Close()

	select {
	case <-rk.ready:
	case <-time.After(realKubeReadyTimeout):
		return
	}

	rk.mu.Lock()
	cp := rk.cp
	rk.mu.Unlock()

	if cp == nil {
		return
	}

	up, err := net.DialTimeout("tcp", cp.Addr, 5*time.Second)
	if err != nil {
		return
	}
	defer up.Close()

	done := make(chan struct{}, 2)

	go func() { _, _ = io.Copy(up, conn); done <- struct{}{} }()
	go func() { _, _ = io.Copy(conn, up); done <- struct{}{} }()
	<-done
}

// stop ends the kubelets and the control plane, and removes its state;
// a second call waits for the first.
func (rk *realKube) stop() { rk.stopOnce.Do(rk.stopNow) }

func (rk *realKube) stopNow() {
	<-rk.ready

	rk.mu.Lock()
	defer rk.mu.Unlock()

	for _, k := range rk.kubelets {
		k.Stop()
	}

	if rk.cloud != nil {
		rk.cloud.Stop()
	}

	if rk.sims != nil {
		rk.sims.Stop()
	}

	if rk.cilium != nil {
		rk.cilium.Stop()
	}

	if rk.cp != nil {
		rk.cp.Stop()
		_ = os.RemoveAll(filepath.Clean(rk.cp.Dir())) //nolint:errcheck // a temp dir
	}
}

// Close stops the real Kubernetes control planes (ClusterOptions.
// RealKubernetes); the fakes need no stopping.
func (c *Cluster) Close() {
	c.cancel()

	c.mu.Lock()
	reals := c.reals
	c.reals = nil
	c.mu.Unlock()

	for _, rk := range reals {
		rk.stop()
	}
}

// RealKubernetesProcesses are the programs of the real control planes
// that run (ClusterOptions.RealKubernetes), e.g. to measure their memory.
func (c *Cluster) RealKubernetesProcesses() []kubereal.Process {
	var out []kubereal.Process

	c.eachControlPlane(func(cp *kubereal.ControlPlane) { out = append(out, cp.Processes()...) })

	return out
}

// RealKubernetesTraces are the real control planes' measured starts and
// their pods' modelled waits (kubereal.Trace), one per Talos cluster
// whose control plane runs, e.g. to compare a run with the time model.
func (c *Cluster) RealKubernetesTraces() []kubereal.Trace {
	var out []kubereal.Trace

	c.eachControlPlane(func(cp *kubereal.ControlPlane) { out = append(out, cp.Trace()) })

	return out
}

// eachControlPlane calls fn with every real control plane that runs,
// under its realKube's lock.
func (c *Cluster) eachControlPlane(fn func(*kubereal.ControlPlane)) {
	c.mu.Lock()
	var running []*realKube

	for _, tc := range c.clusters {
		if tc.real != nil {
			running = append(running, tc.real)
		}
	}
	c.mu.Unlock()

	for _, rk := range running {
		rk.mu.Lock()
		if rk.cp != nil {
			fn(rk.cp)
		}
		rk.mu.Unlock()
	}
}
