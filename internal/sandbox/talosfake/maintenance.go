package talosfake

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	stdx509 "crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"runtime"
	"time"

	"github.com/siderolabs/talos/pkg/machinery/api/machine"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
)

// maintenanceService is the API of a node booted without a machine config:
// machined serves it over TLS with a certificate from a root generated on
// the node (secrets.MaintenanceRoot, internal/app/machined/pkg/controllers/
// secrets/api.go) and does not verify clients (talosctl --insecure). Only
// what a client without the os:admin role may call works: Version and
// ApplyConfiguration ("for maintenance only, verified in the handler",
// internal/app/machined/pkg/system/services/machined.go).
type maintenanceService struct {
	machine.UnimplementedMachineServiceServer

	node *Node
}

// Version reports the Talos version, without features (no config yet).
func (s *maintenanceService) Version(context.Context, *emptypb.Empty) (*machine.VersionResponse, error) {
	n := s.node
	n.cluster.mu.Lock()
	tag := n.opts.TalosVersion
	n.cluster.mu.Unlock()

	return &machine.VersionResponse{Messages: []*machine.Version{{
		Version:  &machine.VersionInfo{Tag: tag, Sha: "sandbox", GoVersion: runtime.Version(), Os: "linux", Arch: "amd64"},
		Platform: &machine.PlatformInfo{Name: "hcloud", Mode: "cloud"},
	}}}, nil
}

// ApplyConfiguration takes the node out of maintenance mode: the config is
// stored on STATE and the node boots on with it (the maintenance API goes
// away, apid comes up with the cluster's certificates).
func (s *maintenanceService) ApplyConfiguration(_ context.Context, in *machine.ApplyConfigurationRequest) (*machine.ApplyConfigurationResponse, error) {
	cfg, err := parseNodeConfig(in.GetData())
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}

	if in.GetDryRun() {
		return &machine.ApplyConfigurationResponse{Messages: []*machine.ApplyConfiguration{{
			Mode: machine.ApplyConfigurationRequest_NO_REBOOT, ModeDetails: "Dry run summary:\n" + detailsNoReboot + " (skipped in dry-run).\n",
		}}}, nil
	}

	n := s.node
	c := n.cluster

	c.mu.Lock()
	c.persisted[n.opts.ServerID] = cfg.raw
	n.publishConfigLocked()
	c.mu.Unlock()

	go func() {
		if sleepCtx(n.ctx, 50*time.Millisecond) {
			n.reboot(nil)
		}
	}()

	return &machine.ApplyConfigurationResponse{Messages: []*machine.ApplyConfiguration{{
		Mode: machine.ApplyConfigurationRequest_NO_REBOOT, ModeDetails: detailsNoReboot,
	}}}, nil
}

// maintenanceTLS presents the node's self-signed maintenance certificate
// and asks for no client certificate.
func (n *Node) maintenanceTLS() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"h2"},
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			n.certMu.Lock()
			defer n.certMu.Unlock()

			if n.maintCert == nil {
				cert, err := selfSignedCert(n.opts.Name, n.certIPs())
				if err != nil {
					return nil, err
				}

				n.maintCert = cert
			}

			return n.maintCert, nil
		},
	}
}

// selfSignedCert makes a certificate that signs itself: no cluster CA
// trusts it.
func selfSignedCert(hostname string, ips []net.IP) (*tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate maintenance key: %w", err)
	}

	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("generate maintenance serial: %w", err)
	}

	tmpl := &stdx509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: hostname, Organization: []string{"talos-maintenance"}},
		NotBefore:             time.Now().Add(-time.Minute),
		NotAfter:              time.Now().Add(certValidity),
		KeyUsage:              stdx509.KeyUsageDigitalSignature | stdx509.KeyUsageCertSign,
		ExtKeyUsage:           []stdx509.ExtKeyUsage{stdx509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           ips,
	}

	der, err := stdx509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("self-sign maintenance certificate: %w", err)
	}

	return &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
