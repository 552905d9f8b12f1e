package talosfake

import (
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
	// PublicIP is a 127.x.y.z address the gRPC API listens on; "" means the
	// server has no public NIC and the API is not reachable from the sandbox.
	PublicIP string
	// PrivateIP is the address in the Hetzner private network; it is not bound,
	// only reported in AddressStatus (and used for etcd peer URLs).
	PrivateIP string
	// Port is the API port: 0 means DefaultPort, a negative value an ephemeral
	// port (tests); Node.Endpoint reports the one in use.
	Port int
	// MachineConfig is the server's user_data: a Talos machine config.
	MachineConfig []byte
	// BootDelay is how long the API refuses connections after the start.
	BootDelay time.Duration
	// TalosVersion is what Version reports; "" means DefaultTalosVersion.
	TalosVersion string
	// SchematicID is the Image Factory schematic the disk was built from.
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

	res   state.State
	links []linkInfo

	grpcSrv  *grpc.Server
	endpoint string

	certMu   sync.Mutex
	certKey  string
	certPair *tls.Certificate

	started  time.Time
	ctx      context.Context //nolint:containedctx // lifetime of the node, cancelled by Stop
	cancel   context.CancelFunc
	ready    chan struct{}
	stopOnce sync.Once
	done     chan struct{}
	serveErr error // set before done is closed
}

func newNode(c *Cluster, o NodeOptions, cfg *nodeConfig) (*Node, error) {
	if o.Port == 0 {
		o.Port = DefaultPort
	}

	if o.TalosVersion == "" {
		o.TalosVersion = DefaultTalosVersion
	}

	if o.PublicIP != "" {
		if _, err := netip.ParseAddr(o.PublicIP); err != nil {
			return nil, fmt.Errorf("start fake Talos node %q: public IP %q: %w", o.Name, o.PublicIP, err)
		}
	}

	if o.PrivateIP != "" {
		if _, err := netip.ParseAddr(o.PrivateIP); err != nil {
			return nil, fmt.Errorf("start fake Talos node %q: private IP %q: %w", o.Name, o.PrivateIP, err)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())

	n := &Node{
		cluster: c,
		opts:    o,
		cfg:     cfg,
		res:     state.WrapCore(namespaced.NewState(inmem.Build)),
		links:   hcloudLinks(o),
		started: time.Now(),
		ctx:     ctx,
		cancel:  cancel,
		ready:   make(chan struct{}),
		done:    make(chan struct{}),
	}

	if err := n.populateResources(ctx); err != nil {
		cancel()

		return nil, fmt.Errorf("start fake Talos node %q: %w", o.Name, err)
	}

	return n, nil
}

// Name is the node's hostname.
func (n *Node) Name() string { return n.opts.Name }

// ServerID is the Hetzner server ID the node runs on.
func (n *Node) ServerID() int64 { return n.opts.ServerID }

// Endpoint is the host:port of the Talos API, "" when the node has no public IP.
func (n *Node) Endpoint() string { return n.endpoint }

// Ready is closed once the API accepts connections (after BootDelay); never
// for a node without a public IP.
func (n *Node) Ready() <-chan struct{} { return n.ready }

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

	n.grpcSrv = grpc.NewServer(grpc.Creds(credentials.NewTLS(n.tlsConfig())))
	machine.RegisterMachineServiceServer(n.grpcSrv, &machineService{node: n})
	cosiv1alpha1.RegisterStateServer(n.grpcSrv, server.NewState(state.Filter(n.res, readOnly)))

	if n.opts.BootDelay > 0 {
		// Refuse connections while "booting": nothing listens until then.
		if err := lis.Close(); err != nil {
			return fmt.Errorf("start fake Talos node %q: %w", n.opts.Name, err)
		}

		lis = nil
	}

	go n.serve(lis)

	return nil
}

func (n *Node) serve(lis net.Listener) {
	defer close(n.done)

	if lis == nil {
		t := time.NewTimer(n.opts.BootDelay)
		select {
		case <-n.ctx.Done():
			t.Stop()

			return
		case <-t.C:
		}

		var err error

		lis, err = net.Listen("tcp", n.endpoint)
		if err != nil {
			n.serveErr = fmt.Errorf("fake Talos node %q: listen on %s after boot: %w", n.opts.Name, n.endpoint, err)

			return
		}
	}

	close(n.ready)

	go func() {
		<-n.ctx.Done()
		n.grpcSrv.Stop()
	}()

	if err := n.grpcSrv.Serve(lis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		n.serveErr = fmt.Errorf("fake Talos node %q: serve: %w", n.opts.Name, err)
	}
}

// Stop shuts the node down (server deleted or powered off). Idempotent.
func (n *Node) Stop() {
	n.stopOnce.Do(func() {
		n.cancel()

		if n.grpcSrv != nil {
			n.grpcSrv.Stop()
		}

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

	var ips []net.IP

	for _, s := range []string{n.opts.PublicIP, n.opts.PrivateIP} {
		if ip := net.ParseIP(s); ip != nil {
			ips = append(ips, ip)
		}
	}

	cert, err := issueServerCert(caCfg.osCA, n.opts.Name, ips)
	if err != nil {
		return nil, err
	}

	n.certKey, n.certPair = key, cert

	return cert, nil
}

// readOnly refuses writes through the API: resources belong to the node's
// controllers, as in Talos.
func readOnly(_ context.Context, access state.Access) error {
	if access.Verb.Readonly() {
		return nil
	}

	return errors.New("resources on a Talos node are read-only through the API")
}
