package sandbox

import (
	"math"
	"time"
)

// Hetzner timings the latency model is built from, unscaled. None of them
// is a published guarantee: Hetzner documents no action durations, so each
// figure is an estimate from operating the field notes' target cluster
// (hcloud CLI progress output, hcloud-upload-image and Packer build logs)
// and says so. They are exported so benchmarks and reports can cite them.
const (
	// HetznerCreateServer is a create_server action: ~10 s from POST
	// /servers to "success" for a shared-vCPU type (estimated).
	HetznerCreateServer = 10 * time.Second
	// HetznerRescueBoot is how long a server takes to come up in the rescue
	// system: ~30 s from the poweron request to sshd answering (estimated,
	// hcloud-upload-image logs). The fake starts the rescue SSH server when
	// the poweron action finishes, so the model splits it between the
	// enable_rescue and poweron actions (see HetznerPowerOn).
	HetznerRescueBoot = 30 * time.Second
	// HetznerPowerOn is a poweron/start_server action: a few seconds
	// (estimated). The OS boot after it is modelled separately.
	HetznerPowerOn = 3 * time.Second
	// HetznerPowerOff is a (hard) poweroff action (estimated).
	HetznerPowerOff = 3 * time.Second
	// HetznerAttach is an attach_to_network action (estimated).
	HetznerAttach = 3 * time.Second
	// HetznerCreateImagePerGB is a create_image (snapshot) action per GB of
	// data on the disk: ~60 s/GB (estimated; snapshots of freshly written
	// Talos disks take about a minute).
	HetznerCreateImagePerGB = 60 * time.Second
	// TalosImageGB is the data a Talos snapshot holds: the hcloud raw image
	// (boot, EFI, META and an empty STATE; ~1 GB written by xz -d | dd,
	// the rest discarded). Estimated.
	TalosImageGB = 1.0
	// HetznerCreateLoadBalancer is a create_load_balancer action: ~15 s
	// (estimated).
	HetznerCreateLoadBalancer = 15 * time.Second
	// HetznerDeleteServer is a delete_server action (estimated).
	HetznerDeleteServer = 5 * time.Second
	// HetznerOtherAction is every other action (add_subnet, apply_firewall,
	// set_firewall_rules, create_volume, ...): ~2 s (estimated).
	HetznerOtherAction = 2 * time.Second
	// HetznerRequestLatency is the round trip of one API request from a
	// European client to api.hetzner.cloud (estimated).
	HetznerRequestLatency = 50 * time.Millisecond
	// TalosBoot is a Talos node booting from its snapshot until the Talos
	// API (apid, port 50000) answers: ~60 s (estimated from talosctl
	// health on cpx22/cpx32).
	TalosBoot = 60 * time.Second
	// TalosEtcdBootstrap is etcd starting after the bootstrap call: ~20 s
	// (estimated). The fake's etcd starts at once, so the model adds it to
	// the boot delay: every node waits for it in parallel, which lengthens
	// the chain exactly as one bootstrap at its end would.
	TalosEtcdBootstrap = 20 * time.Second
)

// HetznerLatency returns sandbox options whose actions take as long as
// Hetzner's (see the Hetzner* constants) multiplied by scale: 1 is real
// time, 0.01 runs a whole cluster in a few seconds. A scale <= 0 is
// treated as 1. Addr, Token, WorkDir and Log are left for the caller.
func HetznerLatency(scale float64) Options {
	if scale <= 0 || math.IsNaN(scale) || math.IsInf(scale, 0) {
		scale = 1
	}
	s := func(d time.Duration) time.Duration { return time.Duration(float64(d) * scale) }
	rescueEnable := HetznerRescueBoot - HetznerPowerOn
	return Options{
		ActionDuration: s(HetznerOtherAction),
		Durations: map[string]time.Duration{
			"create_server":        s(HetznerCreateServer),
			"enable_rescue":        s(rescueEnable),
			"poweron":              s(HetznerPowerOn),
			"start_server":         s(HetznerPowerOn),
			"poweroff":             s(HetznerPowerOff),
			"shutdown":             s(HetznerPowerOff),
			"attach_to_network":    s(HetznerAttach),
			"create_image":         s(time.Duration(float64(HetznerCreateImagePerGB) * TalosImageGB)),
			"create_load_balancer": s(HetznerCreateLoadBalancer),
			"delete_server":        s(HetznerDeleteServer),
		},
		BootDelay:        s(TalosBoot + TalosEtcdBootstrap),
		Latency:          s(HetznerRequestLatency),
		HealthCheckScale: scale,
	}
}

// duration is how long the fake runs an action with this command.
func (o Options) duration(command string) time.Duration {
	if d, ok := o.Durations[command]; ok {
		return d
	}
	return o.ActionDuration
}

// CriticalPath is the longest chain of dependent waits in a cold apply
// under o, the time no implementation can beat:
//
//	imageRounds x (create_server -> enable_rescue -> poweron -> poweroff -> create_image)
//	then create_server -> attach_to_network -> poweron -> Talos boot (+ etcd bootstrap)
//	then the add-ons: applied, and every node Ready with its add-on workloads
//
// The add-ons end the chain (an apply is over when every node is Ready),
// but the model gives them no time of their own: the sandbox Kubernetes
// starts the pods of an applied DaemonSet or Deployment at once, so the
// time the add-ons step takes (applying, the Kubernetes API's latency,
// polling for readiness) is all overhead on this figure.
//
// imageRounds is how many snapshot builds run one after the other: the
// number of distinct images the spec needs divided by the builder's
// parallelism (imaging.Options.MaxParallel, 4 by default), rounded up; 0
// when every snapshot exists. Everything else (network, placement groups,
// firewall, load balancers, subnets) does not gate a server and can run
// while images build, so it is off the path. Request latency, writing the
// image over SSH and polling are not counted: they are the overhead a
// measurement against this figure reveals.
func CriticalPath(o Options, imageRounds int) time.Duration {
	image := o.duration("create_server") + o.duration("enable_rescue") + o.duration("poweron") +
		o.duration("poweroff") + o.duration("create_image")
	node := o.duration("create_server") + o.duration("attach_to_network") + o.duration("poweron") + o.BootDelay
	return time.Duration(max(imageRounds, 0))*image + node
}

// ImageRounds is the imageRounds argument of CriticalPath for images
// distinct snapshots built at most parallel at a time (parallel <= 0
// means the builder's default of 4).
func ImageRounds(images, parallel int) int {
	if parallel <= 0 {
		parallel = 4
	}
	if images <= 0 {
		return 0
	}
	return (images + parallel - 1) / parallel
}
