// Package spec holds the cluster spec file (ohmytalos.yaml): the product's
// public format. It defines the types, fills defaults from the field notes'
// target cluster, and validates with messages that name the field, the
// reason and the fix.
package spec

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Spec is the desired cluster. Every key is documented in docs/spec.md.
type Spec struct {
	Name          string         `yaml:"name"`
	Talos         Talos          `yaml:"talos"`
	Kubernetes    Kubernetes     `yaml:"kubernetes"`
	Location      string         `yaml:"location"`
	Network       Network        `yaml:"network"`
	ControlPlane  ControlPlane   `yaml:"controlPlane"`
	Pools         []Pool         `yaml:"pools"`
	LoadBalancer  LoadBalancer   `yaml:"loadBalancer"`
	Endpoint      Endpoint       `yaml:"endpoint,omitempty"`
	Firewall      Firewall       `yaml:"firewall,omitempty"`
	PublicNetwork *PublicNetwork `yaml:"publicNetwork,omitempty"`
	Schematics    Schematics     `yaml:"schematics"`
	Secrets       Secrets        `yaml:"secrets"`
	Domains       []string       `yaml:"domains,omitempty"`
	Backups       bool           `yaml:"backups,omitempty"`
	Addons        Addons         `yaml:"addons"`
	Upgrade       Upgrade        `yaml:"upgrade,omitempty"`
	// Limits are the account's project limits, when the operator states
	// them (Hetzner's API does not tell them).
	Limits *Limits `yaml:"limits,omitempty"`
	// dir is the spec file's folder (Load): chart paths are relative to it.
	dir string
}

// Talos selects the Talos Linux release.
type Talos struct {
	Version string `yaml:"version"`
	// Patches are machine-config patches of every node, applied after
	// ohmytalos's own documents and before the group's (see Patch).
	Patches []Patch `yaml:"patches,omitempty"`
}

// Kubernetes selects the Kubernetes release (without a leading "v").
type Kubernetes struct {
	Version string `yaml:"version"`
}

// Network is the Hetzner private network and the in-cluster ranges.
type Network struct {
	CIDR     string `yaml:"cidr"`
	Zone     string `yaml:"zone"`
	Pods     string `yaml:"pods"`
	Services string `yaml:"services"`
	// NativeRouting routes pod traffic through Hetzner network routes
	// (the pod range must then lie inside the network range).
	NativeRouting bool `yaml:"nativeRouting,omitempty"`
}

// ControlPlane describes the control plane nodes.
type ControlPlane struct {
	ServerType string `yaml:"serverType"`
	Count      int    `yaml:"count"`
	Subnet     string `yaml:"subnet"`
	Location   string `yaml:"location,omitempty"`
	VIP        string `yaml:"vip,omitempty"`
	VIPLink    string `yaml:"vipLink,omitempty"`
	// Patches are machine-config patches of the control planes, applied
	// after talos.patches.
	Patches []Patch `yaml:"patches,omitempty"`
}

// Pool is a group of worker nodes sharing a server type, subnet and config.
type Pool struct {
	Name         string            `yaml:"name"`
	ServerType   string            `yaml:"serverType"`
	Count        int               `yaml:"count"`
	Subnet       string            `yaml:"subnet"`
	Location     string            `yaml:"location,omitempty"`
	Labels       map[string]string `yaml:"labels,omitempty"`
	Taints       []string          `yaml:"taints,omitempty"`
	VolumeSize   int               `yaml:"volumeSize,omitempty"`
	LoadBalancer *bool             `yaml:"loadBalancer,omitempty"`
	Storage      bool              `yaml:"storage,omitempty"`
	Schematic    string            `yaml:"schematic,omitempty"`
	KeepVolumes  bool              `yaml:"keepVolumes,omitempty"` // keep a removed server's volume (see docs/spec.md)
	// Patches are machine-config patches of the pool's nodes, applied
	// after talos.patches.
	Patches []Patch `yaml:"patches,omitempty"`
}

// InLoadBalancer reports whether the pool's nodes are ingress LB targets.
func (p Pool) InLoadBalancer() bool { return p.LoadBalancer != nil && *p.LoadBalancer }

// LoadBalancer is the public ingress load balancer.
type LoadBalancer struct {
	Type     string `yaml:"type"`
	Location string `yaml:"location,omitempty"`
}

// Endpoint chooses how the operator reaches the Talos and Kubernetes APIs.
type Endpoint struct {
	// Mode is "vip" (the control-plane VIP inside the cluster) or
	// "loadbalancer" (a second load balancer for 6443 and 50000).
	Mode string `yaml:"mode,omitempty"`
	// Access is how the operator's kubeconfig reaches the API in vip mode:
	// "public" (the control planes' public addresses) or "tailscale" (the
	// VIP, through the control planes' advertised subnet route).
	Access string `yaml:"access,omitempty"`
}

// Firewall lists who may reach the Talos (50000) and Kubernetes (6443) APIs.
type Firewall struct {
	// Allow lists the source ranges; empty means the operator's own public
	// address, detected from IPEchoURL (IPv4 /32, IPv6 /64).
	Allow []string `yaml:"allow,omitempty"`
	// IPEchoURL overrides the IP-echo services used to detect the
	// operator's address (comma-separated URLs).
	IPEchoURL string `yaml:"ipEchoURL,omitempty"`
	// OperatorAddress names the operator's public address instead of
	// detecting it (comma-separated IPs or CIDRs); apply's
	// --operator-address wins over it.
	OperatorAddress string `yaml:"operatorAddress,omitempty"`
}

// PublicNetwork says which public addresses servers get.
type PublicNetwork struct {
	IPv4 bool `yaml:"ipv4"`
	IPv6 bool `yaml:"ipv6"`
}

// Schematics are the Image Factory schematics per node role; Extra holds
// schematics for special pools, referenced by Pool.Schematic.
type Schematics struct {
	ControlPlane Schematic            `yaml:"controlPlane"`
	Worker       Schematic            `yaml:"worker"`
	Extra        map[string]Schematic `yaml:"extra,omitempty"`
}

// Schematic lists system extensions and extra kernel arguments.
type Schematic struct {
	Extensions []string `yaml:"extensions"`
	KernelArgs []string `yaml:"kernelArgs,omitempty"`
}

// Secrets holds references to credentials; never the values.
type Secrets struct {
	HCloudToken      SecretRef  `yaml:"hcloudToken"`
	TailscaleAuthKey *SecretRef `yaml:"tailscaleAuthKey,omitempty"`
}

// SecretRef points at a secret in a provider: env (a variable name), bw
// (a Vaultwarden/Bitwarden item ID) or bws (a Secrets Manager secret ID).
type SecretRef struct {
	Provider  string `yaml:"provider"`
	Ref       string `yaml:"ref"`
	Field     string `yaml:"field,omitempty"`
	ServerURL string `yaml:"serverURL,omitempty"`
}

// Load reads, parses, defaults and validates a spec file.
func Load(path string) (*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("spec file %s does not exist: run \"ohmytalos init\" to create one, or pass --config FILE", path)
		}
		return nil, fmt.Errorf("read spec file: %w", err)
	}
	s, err := Parse(data)
	var ps Problems
	if err != nil && !errors.As(err, &ps) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	ps = append(ps, s.LoadPatchFiles(filepath.Dir(path))...)
	ps = append(ps, s.LoadChartPaths(filepath.Dir(path))...)
	if len(ps) > 0 {
		return nil, fmt.Errorf("%s: %w", path, ps)
	}
	return s, nil
}

// Parse decodes a spec, fills defaults and validates. Unknown keys,
// values of the wrong type and validation failures are all returned
// together, as Problems.
func Parse(data []byte) (*Spec, error) {
	s, root, ps, err := decodeTree(data)
	if err != nil {
		return nil, err
	}
	ps = append(ps, explicitZeroProblems(root)...)
	s.Default()
	ps = append(ps, s.Validate()...)
	if len(ps) > 0 {
		return s, ps.bounded()
	}
	return s, nil
}

// Decode decodes a spec without defaults or validation; unknown keys and
// values of the wrong type are reported, all at once, as Problems.
func Decode(data []byte) (*Spec, error) {
	s, ps, err := decodeReporting(data)
	if err != nil {
		return nil, err
	}
	if len(ps) > 0 {
		return nil, ps
	}
	return s, nil
}

// Marshal encodes the spec as YAML.
func (s *Spec) Marshal() ([]byte, error) {
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

// Hash is a stable fingerprint of the (defaulted) spec, used to notice that
// the spec changed between runs.
func (s *Spec) Hash() string {
	b, err := s.Marshal()
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(append(b, s.patchFileData()...))
	return hex.EncodeToString(sum[:8])
}
