package sandbox

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubereal"
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
	// ImagePull is a node's container runtime pulling one of the
	// add-ons' images (10 to 60 MB compressed: the cloud controller, CSI
	// driver and sidecars, Cilium's operator, Traefik) and unpacking it:
	// ~3 s (estimated; unpacking on a shared vCPU dominates the download).
	ImagePull = 3 * time.Second
	// ImagePullCiliumAgent is Cilium's agent image (quay.io/cilium/cilium,
	// ~200 MB compressed): ~10 s (estimated, as ImagePull).
	ImagePullCiliumAgent = 10 * time.Second
	// PodStart is containerd creating and starting a pod's sandbox and
	// containers once their images are there, until the pod is Ready:
	// ~2 s (estimated; the add-ons' readiness probes pass on their first
	// try in the sandbox).
	PodStart = 2 * time.Second
	// KubeletRelist is the kubelet's pod lifecycle event generator
	// period (kubelet's default relist period, 1 s): how often the
	// simulated kubelets look for new pods. Not counted on the critical
	// path (a real kubelet learns of its pods by watch); scaled so the
	// simulation's polling stays a fixed share of a run.
	KubeletRelist = time.Second
	// CloudControllerSync is how often the simulated cloud controller
	// (and cilium operator) look at the cluster: 1 s, the simulation's
	// polling (the real ones watch). Not counted; scaled as KubeletRelist.
	CloudControllerSync = time.Second
	// HealthCheckInterval is a load balancer service's default health
	// check interval (Hetzner API: 15 s), the wait for a new target's
	// first result.
	HealthCheckInterval = 15 * time.Second
)

// minSimPoll bounds the scaled polling of the simulated kubelets and
// controllers from below: at small scales a faster poll only loads the
// API server.
const minSimPoll = 250 * time.Millisecond

// ImagePullTime is the unscaled pull of one image (ImagePull,
// ImagePullCiliumAgent).
func ImagePullTime(image string) time.Duration {
	repo := image
	if i := strings.LastIndex(repo, "@"); i >= 0 {
		repo = repo[:i]
	}
	if i := strings.LastIndex(repo, ":"); i > strings.LastIndex(repo, "/") {
		repo = repo[:i]
	}
	if repo == "quay.io/cilium/cilium" || strings.HasSuffix(repo, "/cilium/cilium") {
		return ImagePullCiliumAgent
	}
	return ImagePull
}

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
		ImagePullDelay:   func(image string) time.Duration { return s(ImagePullTime(image)) },
		PodStart:         s(PodStart),
		KubeletSync:      max(s(KubeletRelist), minSimPoll),
		CloudSync:        max(s(CloudControllerSync), minSimPoll),
	}
}

// duration is how long the fake runs an action with this command.
func (o Options) duration(command string) time.Duration {
	if d, ok := o.Durations[command]; ok {
		return d
	}
	return o.ActionDuration
}

// Run is what CriticalPath needs from one cold apply beside the options.
type Run struct {
	// ImageRounds is how many snapshot builds run one after the other
	// (see ImageRounds); 0 when every snapshot exists.
	ImageRounds int
	// Kube is the cluster's real control plane: its measured start and
	// its pods' modelled waits (talosfake.Cluster.RealKubernetesTraces);
	// zero when none ran.
	Kube kubereal.Trace
	// LBActions is how many actions the cloud controller runs, one after
	// the other, for the ingress Service once its pod is Ready: a load
	// balancer service per port and a target per node; 0 without an
	// ingress load balancer.
	LBActions int
}

// Path is the critical path of a cold apply, term by term: the time no
// implementation can beat under the options' model. Total is its length.
type Path struct {
	// Images is ImageRounds x (create_server -> enable_rescue -> poweron
	// -> poweroff -> create_image): the snapshot builds (modelled).
	Images time.Duration
	// Node is create_server -> attach_to_network -> poweron -> Talos boot
	// (+ etcd bootstrap) of the nodes, which all boot at once (modelled).
	Node time.Duration
	// ControlPlane is the real control plane's start after the etcd
	// bootstrap, etcd to kube-controller-manager's controllers running
	// (measured: processes that start, not a model).
	ControlPlane time.Duration
	// PodStarts and Pulls are the modelled pod starts (Options.PodStart)
	// and image pulls (Options.ImagePullDelay, each image once per node,
	// one at a time, a pull waiting for the node's earlier ones) along
	// the add-ons' chain: the CNI pod on the node the cloud controller
	// runs on (that node turns Ready), the cloud controller's pod (it
	// initializes the nodes), then the longest of the pods that waited
	// for initialized nodes (Traefik, the CSI controller); or the
	// longest single pod when that is longer.
	PodStarts, Pulls time.Duration
	// LBActions and HealthCheck are the other branch after the cloud
	// controller's pod: its actions setting up the ingress load balancer
	// (add_service, add_target: Options.ActionDuration each), then the last target's first health
	// check (HealthCheckInterval scaled by Options.HealthCheckScale); 0
	// when the Traefik branch is longer.
	LBActions, HealthCheck time.Duration
}

// Total is the length of the path.
func (p Path) Total() time.Duration {
	return p.Images + p.Node + p.ControlPlane + p.PodStarts + p.Pulls + p.LBActions + p.HealthCheck
}

// CriticalPath is the longest chain of dependent waits in a cold apply
// under o (see Path for each term):
//
//	imageRounds x image build
//	then the nodes' create, attach, power on, boot (+ etcd bootstrap)
//	then the real control plane's start
//	then the add-ons: the CNI pod and the cloud controller's pod, then
//	  the pods that wait for initialized nodes, or the ingress load
//	  balancer's set-up and first health check, whichever is longer
//
// Everything else (network, placement groups, firewall, load balancers,
// subnets, configs) does not gate a server and can run while images
// build, so it is off the path. Request latency, writing the image over
// SSH, applying the add-ons, the real Kubernetes components' reactions
// and polling are not counted: they are the overhead a measurement
// against this figure reveals.
func CriticalPath(o Options, r Run) Path {
	p := Path{
		Images: time.Duration(max(r.ImageRounds, 0)) * (o.duration("create_server") + o.duration("enable_rescue") +
			o.duration("poweron") + o.duration("poweroff") + o.duration("create_image")),
		Node:         o.duration("create_server") + o.duration("attach_to_network") + o.duration("poweron") + o.BootDelay,
		ControlPlane: cmp.Or(r.Kube.Controllers, r.Kube.APIServer),
	}
	p.addOns(o, r)
	return p
}

// addOns sets the add-on terms from the pods' modelled waits.
func (p *Path) addOns(o Options, r Run) {
	pods := r.Kube.Pods
	longest := func(keep func(kubereal.PodWait) bool) (w kubereal.PodWait) {
		for _, q := range pods {
			if keep(q) && q.Modelled() > w.Modelled() {
				w = q
			}
		}
		return w
	}
	ccmAt := slices.IndexFunc(pods, kubereal.PodWait.CloudController)
	single := longest(func(kubereal.PodWait) bool { return true })
	if ccmAt < 0 {
		p.PodStarts, p.Pulls = single.Start, single.Pull
		return
	}
	ccm := pods[ccmAt]
	cni := longest(func(q kubereal.PodWait) bool { return q.CNI && q.Node == ccm.Node })
	after := longest(func(q kubereal.PodWait) bool { return q.Seen.After(ccm.Running) })
	// The cloud controller's pod waits for its node to be Ready (it does
	// not tolerate not-ready nodes): it follows the CNI pod. Seen before
	// that, the two overlapped (its pull queued behind the CNI's is in
	// its own Pull).
	head := cni.Modelled() + ccm.Modelled()
	if ccm.Seen.Before(cni.Running) {
		head = max(cni.Modelled(), ccm.Modelled())
		if cni.Modelled() > ccm.Modelled() {
			ccm = kubereal.PodWait{}
		} else {
			cni = kubereal.PodWait{}
		}
	}
	lb, check := time.Duration(0), time.Duration(0)
	if r.LBActions > 0 {
		lb, check = time.Duration(r.LBActions)*o.duration("add_target"), o.scaledHealthCheck(HealthCheckInterval)
	}
	switch {
	case single.Modelled() >= head+max(after.Modelled(), lb+check):
		p.PodStarts, p.Pulls = single.Start, single.Pull
	case lb+check > after.Modelled():
		p.PodStarts, p.Pulls = cni.Start+ccm.Start, cni.Pull+ccm.Pull
		p.LBActions, p.HealthCheck = lb, check
	default:
		p.PodStarts, p.Pulls = cni.Start+ccm.Start+after.Start, cni.Pull+ccm.Pull+after.Pull
	}
}

// ImageRounds is Run.ImageRounds for images
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
