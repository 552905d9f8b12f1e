package talosfake

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	cosiv1alpha1 "github.com/cosi-project/runtime/api/v1alpha1"
	"github.com/cosi-project/runtime/pkg/state"
	"github.com/cosi-project/runtime/pkg/state/impl/inmem"
	"github.com/cosi-project/runtime/pkg/state/impl/namespaced"
	"github.com/cosi-project/runtime/pkg/state/protobuf/server"
	"github.com/siderolabs/talos/pkg/machinery/api/machine"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// DefaultPort is apid's port (constants.ApidPort in machinery).
const DefaultPort = 50000

// DefaultTalosVersion is the Talos version fake nodes report when
// NodeOptions.TalosVersion is empty: the machinery version the product pins.
const DefaultTalosVersion = "v1.13.9"

// NodeOptions describes the fake Hetzner server a node runs on.
type NodeOptions struct {
	// ServerID is the Hetzner server ID; the node's providerID is "hcloud://ID".
	ServerID int64
	// Name is the hostname (the Hetzner server name).
	Name string
	// PublicIP is a 127.x.y.z address the gRPC API listens on (the server's
	// public IPv4); "" means the API is not reachable from the sandbox.
	PublicIP string
	// PublicIPv6 is the server's public IPv6 address ("" without one). It is
	// only reported on eth0: a server with a public IPv6 but no IPv4 still
	// has its public NIC as eth0 and its private NIC as eth1.
	PublicIPv6 string
	// PrivateIP is the address in the Hetzner private network; it is not bound,
	// only reported in AddressStatus (and used for etcd peer URLs).
	PrivateIP string
	// NetworkCIDR is the ip_range of the private network (e.g. 10.0.0.0/16):
	// Hetzner's DHCP routes it via the network's gateway, its first address.
	NetworkCIDR string
	// Port is the API port: 0 means DefaultPort, a negative value an ephemeral
	// port (tests); Node.Endpoint reports the one in use.
	Port int
	// MachineConfig is the server's user_data: a Talos machine config. Empty
	// means maintenance mode (only the maintenance API, self-signed TLS).
	MachineConfig []byte
	// BootDelay is how long the API refuses connections after the start.
	BootDelay time.Duration
	// ServicesDelay is how long after the API comes up the node's services
	// take to be ready for Bootstrap; 0 means ClusterOptions.ServicesDelay.
	ServicesDelay time.Duration
	// TalosVersion is what Version reports; "" means DefaultTalosVersion.
	TalosVersion string
	// SchematicID is the Image Factory schematic the server's image was
	// built from ("" for none); reported as the "schematic" extension.
	SchematicID string
}

// Node is one fake Talos node.
type Node struct {
	cluster *Cluster
	opts    NodeOptions
	seq     uint64 // start order, guarded by cluster.mu

	// Guarded by cluster.mu.
	cfg         *nodeConfig
	vipHeld     netip.Addr
	vipLinkHeld string
	kube        *kubeAPI
	kubeErr     error
	// down is set while the node reboots (upgrade, reset): its API and
	// services are away, it stays an etcd member.
	down bool
	// servicesAt is when the node's services are up on this boot.
	servicesAt time.Time
	// etcdLeft is set after the node left etcd (or was removed) on this
	// boot: it does not rejoin until its next boot with a wiped etcd.
	etcdLeft bool
	// pulled are the images pulled into containerd on this boot.
	pulled map[string]bool
	// vipBackoff is when the node may campaign for the VIP again after a
	// failed claim.
	vipBackoff time.Time
	upgrading  bool
	// started is when StartNode booted the node.
	started time.Time

	res   state.State
	links []linkInfo

	endpoint string

	certMu   sync.Mutex
	certKey  string
	certPair *tls.Certificate
	// maintCert is the self-signed certificate of maintenance mode.
	maintCert *tls.Certificate

	ctx      context.Context //nolint:containedctx // lifetime of the node, cancelled by Stop
	cancel   context.CancelFunc
	rebootCh chan rebootRequest
	// boots counts the node's boots (guarded by cluster.mu).
	boots    int
	ready    chan struct{}
	stopOnce sync.Once
	done     chan struct{}
	serveErr error // set before done is closed
}

// rebootRequest asks the node's run loop to reboot; apply runs (under
// cluster.mu) while the node is down, before it boots again.
type rebootRequest struct {
	apply func()
}

func newNode(c *Cluster, o NodeOptions, cfg *nodeConfig) (*Node, error) {
	if o.Port == 0 {
		o.Port = DefaultPort
	}

	if o.TalosVersion == "" {
		o.TalosVersion = DefaultTalosVersion
	}

	for what, s := range map[string]string{"public IP": o.PublicIP, "public IPv6": o.PublicIPv6, "private IP": o.PrivateIP} {
		if s == "" {
			continue
		}

		if _, err := netip.ParseAddr(s); err != nil {
			return nil, fmt.Errorf("start fake Talos node %q: %s %q: %w", o.Name, what, s, err)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())

	n := &Node{
		cluster:  c,
		opts:     o,
		cfg:      cfg,
		res:      state.WrapCore(namespaced.NewState(inmem.Build)),
		links:    hcloudLinks(o),
		pulled:   map[string]bool{},
		started:  time.Now(),
		ctx:      ctx,
		cancel:   cancel,
		rebootCh: make(chan rebootRequest, 1),
		ready:    make(chan struct{}),
		done:     make(chan struct{}),
	}

	n.servicesAt = time.Now().Add(o.BootDelay + n.servicesDelay())

	if err := n.populateResources(ctx); err != nil {
		cancel()

		return nil, fmt.Errorf("start fake Talos node %q: %w", o.Name, err)
	}

	return n, nil
}

// Boots is how many times the node booted: 1 until its first reboot.
func (n *Node) Boots() int { return locked(n, func() int { return n.boots }) }

// Name is the hostname.
func (n *Node) Name() string { return n.opts.Name }

// ServerID is the Hetzner server ID the node runs on.
func (n *Node) ServerID() int64 { return n.opts.ServerID }

// Endpoint is the host:port of the Talos API, "" when the node has no public IP.
func (n *Node) Endpoint() string { return n.endpoint }

// Ready is closed once the API accepts connections (after BootDelay); never
// for a node without a public IP.
func (n *Node) Ready() <-chan struct{} { return n.ready }

// TalosVersion is the Talos version the node runs now (it follows upgrades).
func (n *Node) TalosVersion() string { return locked(n, func() string { return n.opts.TalosVersion }) }

// SchematicID is the Image Factory schematic the node runs now.
func (n *Node) SchematicID() string { return locked(n, func() string { return n.opts.SchematicID }) }

// KubeletVersion is the kubelet version the node runs: the tag of its
// config's machine.kubelet.image ("" in maintenance mode).
func (n *Node) KubeletVersion() string {
	return locked(n, func() string { return n.cfg.kubeletVersion })
}

// Maintenance reports whether the node runs without a machine config.
func (n *Node) Maintenance() bool { return locked(n, func() bool { return n.cfg.maintenance }) }

// locked reads the node's state under the cluster's lock.
func locked[T any](n *Node, read func() T) T {
	n.cluster.mu.Lock()
	defer n.cluster.mu.Unlock()

	return read()
}

// start binds the API address (failing fast when it is taken) and serves,
// immediately or once BootDelay has passed.
func (n *Node) start() error {
	if n.opts.PublicIP == "" {
		go func() {
			<-n.ctx.Done()
			close(n.done)
		}()

		return nil
	}

	port := n.opts.Port
	if port < 0 {
		port = 0
	}

	addr := net.JoinHostPort(n.opts.PublicIP, strconv.Itoa(port))

	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("start fake Talos node %q: listen on %s: %w; pick a free loopback address or port", n.opts.Name, addr, err)
	}

	n.endpoint = lis.Addr().String()

	if n.opts.BootDelay > 0 {
		// Refuse connections while "booting": nothing listens until then.
		if err := lis.Close(); err != nil {
			return fmt.Errorf("start fake Talos node %q: %w", n.opts.Name, err)
		}

		lis = nil
	}

	go n.run(lis)

	return nil
}

// newServer builds the gRPC server of this boot: the maintenance API when
// the node has no config, else apid's services over mutual TLS.
func (n *Node) newServer(maintenance bool) *grpc.Server {
	if maintenance {
		srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(n.maintenanceTLS())))
		machine.RegisterMachineServiceServer(srv, &maintenanceService{node: n})
		cosiv1alpha1.RegisterStateServer(srv, server.NewState(state.Filter(n.res, n.accessPolicy)))

		return srv
	}

	srv := grpc.NewServer(grpc.Creds(credentials.NewTLS(n.tlsConfig())))
	machine.RegisterMachineServiceServer(srv, &machineService{node: n})
	machine.RegisterLifecycleServiceServer(srv, &lifecycleService{node: n})
	machine.RegisterImageServiceServer(srv, &imageService{node: n})
	cosiv1alpha1.RegisterStateServer(srv, newStateServer(n))

	return srv
}

// run is the node's boot loop: wait BootDelay (connections refused),
// serve, and on a reboot stop serving for the reboot delay and boot again.
func (n *Node) run(lis net.Listener) {
	defer close(n.done)

	delay := n.opts.BootDelay
	readyOnce := sync.Once{}

	for {
		if lis == nil {
			if !sleepCtx(n.ctx, delay) {
				return
			}

			var err error

			lis, err = net.Listen("tcp", n.endpoint)
			if err != nil {
				n.serveErr = fmt.Errorf("fake Talos node %q: listen on %s after boot: %w", n.opts.Name, n.endpoint, err)

				return
			}
		}

		n.cluster.mu.Lock()
		maintenance := n.cfg.maintenance
		n.down = false
		n.boots++
		n.servicesAt = time.Now().Add(n.servicesDelay())
		n.cluster.reconcileLocked(n.cluster.clusters[n.cfg.clusterID])
		n.cluster.mu.Unlock()

		srv := n.newServer(maintenance)
		served := make(chan error, 1)

		go func(l net.Listener) { served <- srv.Serve(n.admit(l)) }(lis)

		readyOnce.Do(func() { close(n.ready) })

		select {
		case <-n.ctx.Done():
			srv.Stop()
			<-served

			return
		case err := <-served:
			if err != nil && !errors.Is(err, grpc.ErrServerStopped) {
				n.serveErr = fmt.Errorf("fake Talos node %q: serve: %w", n.opts.Name, err)
			}

			return
		case rq := <-n.rebootCh:
			srv.Stop()
			<-served

			lis = nil
			delay = n.cluster.rebootDelay()

			n.cluster.mu.Lock()
			n.down = true
			n.etcdLeft = false
			n.pulled = map[string]bool{}

			if rq.apply != nil {
				rq.apply()
			}

			n.loadBootConfigLocked()
			n.loadInstalledLocked()
			n.publishConfigLocked()

			n.cluster.reconcileAllLocked()
			n.cluster.mu.Unlock()
		}
	}
}

// reboot asks the run loop to reboot the node; apply runs while it is down.
// It reports false when a reboot is already pending.
func (n *Node) reboot(apply func()) bool {
	select {
	case n.rebootCh <- rebootRequest{apply: apply}:
		return true
	default:
		return false
	}
}

func (n *Node) servicesDelay() time.Duration {
	if n.opts.ServicesDelay > 0 {
		return n.opts.ServicesDelay
	}

	return n.cluster.servicesDelay()
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}

	t := time.NewTimer(d)
	defer t.Stop()

	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Stop shuts the node down (server deleted or powered off). Idempotent.
func (n *Node) Stop() {
	n.stopOnce.Do(func() {
		n.cancel()

		<-n.done
		n.cluster.remove(n)

		n.cluster.mu.Lock()
		k := n.kube
		n.kube = nil
		n.cluster.mu.Unlock()

		if k != nil {
			k.stop()
		}
	})
}

// Err reports why the API stopped serving on its own, if it did.
func (n *Node) Err() error {
	select {
	case <-n.done:
		return n.serveErr
	default:
		return nil
	}
}

// tlsConfig requires client certificates signed by the OS CA and presents a
// server certificate issued from it, both read from the current config on
// every handshake (ApplyConfiguration may rotate them).
func (n *Node) tlsConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			n.cluster.mu.Lock()
			cfg := n.cfg
			caCfg := n.cluster.osCALocked(n)
			n.cluster.mu.Unlock()

			if cfg.maintenance {
				return nil, errors.New("the node was reset: it has no machine config")
			}

			pool, err := clientCAPool(cfg)
			if err != nil {
				return nil, err
			}

			if caCfg == nil {
				return nil, errors.New("no control plane of this cluster is running to issue the worker's API certificate")
			}

			cert, err := n.serverCert(caCfg)
			if err != nil {
				return nil, err
			}

			return &tls.Config{
				MinVersion:   tls.VersionTLS12,
				ClientAuth:   tls.RequireAndVerifyClientCert,
				ClientCAs:    pool,
				Certificates: []tls.Certificate{*cert},
				NextProtos:   []string{"h2"},
			}, nil
		},
	}
}

func (n *Node) serverCert(caCfg *nodeConfig) (*tls.Certificate, error) {
	n.certMu.Lock()
	defer n.certMu.Unlock()

	key := string(caCfg.osCA.Crt)
	if n.certPair != nil && n.certKey == key {
		return n.certPair, nil
	}

	cert, err := issueServerCert(caCfg.osCA, n.opts.Name, n.certIPs())
	if err != nil {
		return nil, err
	}

	n.certKey, n.certPair = key, cert

	return cert, nil
}

func (n *Node) certIPs() []net.IP {
	var ips []net.IP

	for _, s := range []string{n.opts.PublicIP, n.opts.PublicIPv6, n.opts.PrivateIP} {
		if ip := net.ParseIP(s); ip != nil {
			ips = append(ips, ip)
		}
	}

	return ips
}

// readOnly refuses writes through the API: resources belong to the node's
// controllers, as in Talos.
func readOnly(_ context.Context, access state.Access) error {
	if access.Verb.Readonly() {
		return nil
	}

	return errors.New("resources on a Talos node are read-only through the API")
}

// loadBootConfigLocked makes the node boot with what its STATE partition
// holds: a staged config, or none after a reset.
func (n *Node) loadBootConfigLocked() {
	raw, ok := n.cluster.persisted[n.opts.ServerID]
	if !ok {
		return
	}

	if raw == nil {
		n.cfg = maintenanceConfig(n.opts.ServerID)

		return
	}

	if bytes.Equal(raw, n.cfg.raw) {
		return
	}

	if cfg, err := parseNodeConfig(raw); err == nil {
		n.cfg = cfg
		n.cluster.clusterLocked(cfg)
		_ = n.writeRoutes(n.ctx, n.wantRoutes()) //nolint:errcheck // the in-memory state only fails on a closed context
	}
}

// loadInstalledLocked boots what an upgrade installed on the disk.
func (n *Node) loadInstalledLocked() {
	inst, ok := n.cluster.installed[n.opts.ServerID]
	if !ok || (inst.version == n.opts.TalosVersion && inst.schematic == n.opts.SchematicID) {
		return
	}

	n.opts.TalosVersion, n.opts.SchematicID = inst.version, inst.schematic

	// In-memory state: no I/O to bound.
	if err := n.writeInstalled(context.Background(), inst.version, inst.schematic); err != nil {
		n.cluster.opts.Logger.Warn("report installed version", "node", n.opts.Name, "error", err.Error())
	}
}
