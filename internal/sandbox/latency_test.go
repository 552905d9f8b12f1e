package sandbox

import (
	"context"
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubereal"
)

func TestHetznerLatencyScales(t *testing.T) {
	full := HetznerLatency(1)
	tests := []struct {
		command string
		want    time.Duration
	}{
		{"create_server", 10 * time.Second},
		{"enable_rescue", 27 * time.Second},
		{"poweron", 3 * time.Second},
		{"create_image", 60 * time.Second},
		{"create_load_balancer", 15 * time.Second},
		{"attach_to_network", 3 * time.Second},
		{"add_subnet", 2 * time.Second}, // falls back to ActionDuration
	}
	for _, tt := range tests {
		if got := full.duration(tt.command); got != tt.want {
			t.Errorf("scale 1: %s = %v, want %v", tt.command, got, tt.want)
		}
		if got := HetznerLatency(0.01).duration(tt.command); got != tt.want/100 {
			t.Errorf("scale 0.01: %s = %v, want %v", tt.command, got, tt.want/100)
		}
	}
	if got := full.duration("enable_rescue") + full.duration("poweron"); got != HetznerRescueBoot {
		t.Errorf("rescue boot = %v, want %v", got, HetznerRescueBoot)
	}
	if got := full.ImagePullDelay("quay.io/cilium/cilium:v1.19.6"); got != ImagePullCiliumAgent {
		t.Errorf("scale 1: cilium agent pull = %v, want %v", got, ImagePullCiliumAgent)
	}
	if got := HetznerLatency(0.5).ImagePullDelay("docker.io/traefik:v3.7.11"); got != ImagePull/2 {
		t.Errorf("scale 0.5: traefik pull = %v, want %v", got, ImagePull/2)
	}
	if got := HetznerLatency(0.5).PodStart; got != PodStart/2 {
		t.Errorf("scale 0.5: pod start = %v, want %v", got, PodStart/2)
	}
	if got := HetznerLatency(0.01).KubeletSync; got != minSimPoll {
		t.Errorf("scale 0.01: kubelet sync = %v, want the floor %v", got, minSimPoll)
	}
	if full.BootDelay != 80*time.Second {
		t.Errorf("boot delay = %v, want 80s (boot + etcd bootstrap)", full.BootDelay)
	}
	for _, bad := range []float64{0, -1} {
		if got := HetznerLatency(bad).duration("create_server"); got != 10*time.Second {
			t.Errorf("scale %v: create_server = %v, want the unscaled 10s", bad, got)
		}
	}
}

func TestCriticalPath(t *testing.T) {
	o := HetznerLatency(1)
	// image: 10 + 27 + 3 + 3 + 60 = 103 s; node: 10 + 3 + 3 + 80 = 96 s.
	tests := []struct {
		rounds int
		want   time.Duration
	}{
		{0, 96 * time.Second},
		{1, 199 * time.Second},
		{2, 302 * time.Second},
		{-1, 96 * time.Second},
	}
	for _, tt := range tests {
		if got := CriticalPath(o, Run{ImageRounds: tt.rounds}).Total(); got != tt.want {
			t.Errorf("CriticalPath(rounds=%d) = %v, want %v", tt.rounds, got, tt.want)
		}
	}
	if got := CriticalPath(HetznerLatency(0.01), Run{ImageRounds: 1}).Total(); got != 1990*time.Millisecond {
		t.Errorf("scaled critical path = %v, want 1.99s", got)
	}
	for _, tt := range []struct{ images, parallel, want int }{
		{0, 4, 0}, {2, 4, 1}, {4, 4, 1}, {5, 4, 2}, {5, 0, 2}, {3, 1, 3},
	} {
		if got := ImageRounds(tt.images, tt.parallel); got != tt.want {
			t.Errorf("ImageRounds(%d, %d) = %d, want %d", tt.images, tt.parallel, got, tt.want)
		}
	}
}

// TestCriticalPathAddOns checks the add-on chain: the CNI pod on the
// cloud controller's node, the cloud controller's pod, then the longer of
// the pods that waited for initialized nodes and the ingress load
// balancer's set-up and first health check; the control plane's
// measured start comes first.
func TestCriticalPathAddOns(t *testing.T) {
	o := HetznerLatency(1)
	t0 := time.Now()
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	pod := func(name, node, image string, cni bool, seen, running int, pull time.Duration) kubereal.PodWait {
		return kubereal.PodWait{Name: name, Node: node, Images: []string{image}, CNI: cni, Seen: at(seen), Running: at(running),
			Start: PodStart, Pull: pull}
	}
	pods := []kubereal.PodWait{
		pod("cilium-a", "cp-1", "quay.io/cilium/cilium:v1.19.6", true, 0, 12, 10*time.Second),
		pod("cilium-b", "cp-2", "quay.io/cilium/cilium:v1.19.6", true, 0, 12, 10*time.Second),
		pod("ccm", "cp-2", "docker.io/hetznercloud/hcloud-cloud-controller-manager:v1.35.0", false, 12, 17, 3*time.Second),
		pod("traefik", "worker-1", "docker.io/traefik:v3.7.11", false, 18, 23, 3*time.Second),
	}
	base := 96 * time.Second
	kube := kubereal.Trace{APIServer: 2 * time.Second, Controllers: 4 * time.Second, Pods: pods}
	// Traefik's branch (2 + 3 s) is shorter than 4 actions (8 s) and the
	// first check (15 s).
	got := CriticalPath(o, Run{Kube: kube, LBActions: 4})
	want := Path{Node: base, ControlPlane: 4 * time.Second, PodStarts: 2 * PodStart, Pulls: 13 * time.Second,
		LBActions: 8 * time.Second, HealthCheck: 15 * time.Second}
	if got != want {
		t.Errorf("with the ingress load balancer: %+v, want %+v", got, want)
	}
	// Without one, Traefik's pod ends the chain.
	got = CriticalPath(o, Run{Kube: kube})
	want = Path{Node: base, ControlPlane: 4 * time.Second, PodStarts: 3 * PodStart, Pulls: 16 * time.Second}
	if got != want {
		t.Errorf("without the ingress load balancer: %+v, want %+v", got, want)
	}
	// A cloud controller's pod seen before its node's CNI pod ran
	// overlapped it: the longer of the two heads the chain.
	early := append([]kubereal.PodWait(nil), pods...)
	early[2].Seen = at(5)
	got = CriticalPath(o, Run{Kube: kubereal.Trace{Controllers: 4 * time.Second, Pods: early}})
	want = Path{Node: base, ControlPlane: 4 * time.Second, PodStarts: 2 * PodStart, Pulls: 13 * time.Second}
	if got != want {
		t.Errorf("with an early cloud controller: %+v, want %+v", got, want)
	}
	// Without a cloud controller, the longest pod alone.
	got = CriticalPath(o, Run{Kube: kubereal.Trace{APIServer: 2 * time.Second, Pods: pods[:2]}})
	want = Path{Node: base, ControlPlane: 2 * time.Second, PodStarts: PodStart, Pulls: 10 * time.Second}
	if got != want {
		t.Errorf("without a cloud controller: %+v, want %+v", got, want)
	}
}

// TestHetznerLatencyPacesActions checks the model reaches the wire: a
// create_server action does not finish before its scaled duration.
func TestHetznerLatencyPacesActions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	o := HetznerLatency(0.005) // create_server 50ms
	sb, err := Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	c := hcloud.NewClient(hcloud.WithEndpoint(sb.HCloudURL), hcloud.WithToken(sb.Token),
		hcloud.WithPollOpts(hcloud.PollOpts{BackoffFunc: hcloud.ConstantBackoff(5 * time.Millisecond)}))
	start := time.Now()
	res, _, err := c.Server.Create(ctx, hcloud.ServerCreateOpts{
		Name: "latency", ServerType: &hcloud.ServerType{Name: "cx23"}, Image: &hcloud.Image{Name: "debian-12"},
		Location: &hcloud.Location{Name: "nbg1"}, StartAfterCreate: hcloud.Ptr(false),
	})
	if err != nil {
		t.Fatalf("create server: %v", err)
	}
	if err := c.Action.WaitFor(ctx, res.Action); err != nil {
		t.Fatalf("wait for create_server: %v", err)
	}
	want := o.duration("create_server")
	if got := time.Since(start); got < want {
		t.Errorf("create_server finished after %v, before its modelled %v", got, want)
	}
}
