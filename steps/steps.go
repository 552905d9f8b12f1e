// Package steps holds the provisioning steps, headless: secrets, images,
// network, pools, configs, servers, bootstrap, addons, scale-down and
// upgrade. Each is an engine.Step that looks resources up before creating
// them, so re-running is safe. Their names (StepSecrets, ...) live here;
// the engine only knows the StepName type. Destroy is steps/destroy.
// Nothing here imports the sandbox: cmd wires it (SandboxEndpoints), and a
// test keeps it so. The clients the steps use (secrets cache, Hetzner,
// Kubernetes, Talos, Image Factory, IP echo) are internal/clients', built
// by cmd and embedded in Deps. The package serves cmd and ui; it is not a
// public API.
package steps

import (
	"fmt"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/clients"
	"github.com/ohmytalos/ohmytalos/internal/engine"
)

// Deps are what the steps share: the clients (built in cmd, see
// internal/clients; their methods, such as HCloud, Secret and Kube, are
// called on Deps directly) and the settings that only steps read.
type Deps struct {
	*clients.Set
	// Sandbox labels the run SANDBOX (the Hetzner API dialled is the
	// sandbox's).
	Sandbox bool
	// SSHPort is where rescue systems listen (22 on Hetzner).
	SSHPort int
	// Timeouts for waiting on nodes (default 15 minutes).
	NodeTimeout time.Duration
	// AllowLockout lets apply set a firewall.allow that does not admit the
	// operator's address (apply --allow-lockout).
	AllowLockout bool
	// OperatorAddresses names the operator's public address (IPs or CIDRs,
	// comma-separated; plan and apply --operator-address): it wins over
	// the spec's firewall.operatorAddress, and neither is detected then.
	OperatorAddresses string
	// LBHealthPoll is the least time between two reads of the ingress
	// load balancer while apply waits for its health checks (0: 3 s,
	// lbHealthPoll, for Hetzner's 15 s check interval). A sandbox whose
	// health checks follow a faster time model may read more often.
	LBHealthPoll time.Duration
}

func (d *Deps) poll() time.Duration {
	if d.PollInterval > 0 {
		return d.PollInterval
	}
	return 2 * time.Second
}

func (d *Deps) lbHealthPoll() time.Duration {
	if d.LBHealthPoll > 0 {
		return d.LBHealthPoll
	}
	return lbHealthPoll
}

func (d *Deps) nodeTimeout() time.Duration {
	if d.NodeTimeout > 0 {
		return d.NodeTimeout
	}
	return 15 * time.Minute
}

// All returns the steps in order. The configs step owns the rendered
// configs; the servers step reads them from it.
func All(d *Deps) []engine.Step {
	configs := &Configs{d: d}
	return []engine.Step{
		&Secrets{d}, &Images{d}, &Network{d}, &Pools{d}, configs, &Servers{d: d, configs: configs}, &Bootstrap{d}, &Addons{d}, &ScaleDown{d}, &Upgrade{d: d, configs: configs},
	}
}

// rateEvent reports the API budget left, when known.
func (d *Deps) rateEvent(emit engine.Emit) {
	if d.Meter == nil {
		return
	}
	if rem, lim, ok := d.Meter.RateLimit(); ok {
		emit(engine.Event{Kind: engine.KindLog, Message: fmt.Sprintf("Hetzner API: %d of %d requests left this hour", rem, lim), Resource: "ratelimit",
			RateLimit: &engine.RateLimit{Remaining: rem, Limit: lim}})
	}
}

// The steps' dependencies (engine.Dependent): image builds, the slowest
// part, overlap the network, pools and configs.

// After implements engine.Dependent.
func (s *Images) After() []engine.StepName { return []engine.StepName{StepSecrets} }

// After implements engine.Dependent.
func (s *Network) After() []engine.StepName { return []engine.StepName{StepSecrets} }

// After implements engine.Dependent.
func (s *Pools) After() []engine.StepName { return []engine.StepName{StepNetwork} }

// After implements engine.Dependent: the API load balancer's address goes
// into the configs in loadbalancer endpoint mode.
func (s *Configs) After() []engine.StepName { return []engine.StepName{StepPools} }

// After implements engine.Dependent.
func (s *Servers) After() []engine.StepName {
	return []engine.StepName{StepImages, StepConfigs}
}

// After implements engine.Dependent.
func (s *Bootstrap) After() []engine.StepName { return []engine.StepName{StepServers} }
