package sandbox

import (
	"context"
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"
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
		if got := CriticalPath(o, tt.rounds); got != tt.want {
			t.Errorf("CriticalPath(rounds=%d) = %v, want %v", tt.rounds, got, tt.want)
		}
	}
	if got := CriticalPath(HetznerLatency(0.01), 1); got != 1990*time.Millisecond {
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
