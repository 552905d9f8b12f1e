package e2e

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/cloud"
	"github.com/ohmytalos/ohmytalos/internal/sandbox"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/hcloudfake"
	"github.com/ohmytalos/ohmytalos/internal/state"
)

var (
	stormSeed   = flag.Uint64("storm.seed", 1, "PRNG seed of TestStorm's faults (0 = from the clock; the seed used is logged)")
	stormFaults = flag.Int("storm.faults", 14, "how many faults TestStorm injects in all")
)

// fault is one kind of trouble the storm injects.
type fault struct {
	name   string
	weight int
	inject func(f *hcloudfake.Fake, rng *rand.Rand) string
}

// stormFaultKinds: 429 bursts and 502/504 (hcloud-go retries them), 500
// and 503 (it does not: the step fails), and actions that end in error.
func stormFaultKinds() []fault {
	// The API prefixes apply uses.
	stormPaths := []string{"/servers", "/actions", "/images", "/networks", "/load_balancers", "/placement_groups", "/firewalls", "/ssh_keys"}
	status := func(code, maxBurst int) func(*hcloudfake.Fake, *rand.Rand) string {
		return func(f *hcloudfake.Fake, rng *rand.Rand) string {
			p, n := stormPaths[rng.IntN(len(stormPaths))], 1+rng.IntN(maxBurst)
			f.InjectStatus("", p, code, n)
			return fmt.Sprintf("%d x%d on %s", code, n, p)
		}
	}
	actions := []string{"create_server", "enable_rescue", "poweron", "poweroff", "create_image", "attach_to_network",
		"create_load_balancer", "delete_server", "apply_firewall"}
	return []fault{
		{"429 burst", 4, status(http.StatusTooManyRequests, 2)},
		{"502", 1, status(http.StatusBadGateway, 1)},
		{"504", 1, status(http.StatusGatewayTimeout, 1)},
		{"500", 2, status(http.StatusInternalServerError, 1)},
		{"503", 1, status(http.StatusServiceUnavailable, 1)},
		{"failed action", 3, func(f *hcloudfake.Fake, rng *rand.Rand) string {
			a := actions[rng.IntN(len(actions))]
			f.FailActions(a, 1)
			return "failed " + a
		}},
	}
}

// storm injects faults on the request clock: after every gap requests
// (drawn around meanGap), one fault, until budget faults are out.
type storm struct {
	f       *hcloudfake.Fake
	rng     *rand.Rand
	kinds   []fault
	meanGap int
	mu      sync.Mutex
	budget  int
	log     []string
}

func (s *storm) run(ctx context.Context) {
	next := s.f.Stats().Requests + 1 + s.rng.IntN(2*s.meanGap)
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.mu.Lock()
		if s.budget <= 0 {
			s.mu.Unlock()
			return
		}
		if n := s.f.Stats().Requests; n >= next {
			total := 0
			for _, k := range s.kinds {
				total += k.weight
			}
			pick := s.rng.IntN(total)
			for _, k := range s.kinds {
				if pick < k.weight {
					s.log = append(s.log, fmt.Sprintf("req %d: %s", n, k.inject(s.f, s.rng)))
					break
				}
				pick -= k.weight
			}
			s.budget--
			next = n + 1 + s.rng.IntN(2*s.meanGap)
		}
		s.mu.Unlock()
	}
}

// TestStorm applies the seed spec through 429 bursts, 5xx and failed
// actions injected at a set rate: each run either completes or fails with
// an error that names what failed and leaves a resumable state; rerunning
// completes, and no resource ever exists twice.
func TestStorm(t *testing.T) {
	t.Parallel()
	seed := *stormSeed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("storm seed %d (rerun with -storm.seed=%d)", seed, seed)
	sp := loadSeed(t)
	o := sandbox.HetznerLatency(0.01)
	c := newCluster(t, sp, o, 5*time.Millisecond)
	f := c.sb.HCloud
	// One fault every ~12 requests: a cold seed apply makes ~170.
	s := &storm{f: f, rng: rand.New(rand.NewPCG(seed, ^seed)), kinds: stormFaultKinds(), meanGap: 12, budget: *stormFaults}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	go s.run(ctx)

	const maxRuns = 12
	var failures []string
	done := false
	for run := 1; run <= maxRuns && !done; run++ {
		evs, err := c.apply(ctx)
		checkNoDuplicates(t, f, fmt.Sprintf("after run %d", run))
		if err == nil {
			done = true
			t.Logf("run %d completed (%d resources created)", run, evs.actions()["create"])
			break
		}
		failures = append(failures, err.Error())
		t.Logf("run %d failed: %v", run, err)
		checkFailure(t, c, err)
	}
	s.mu.Lock()
	t.Logf("injected %d faults:\n  %s", len(s.log), strings.Join(s.log, "\n  "))
	s.mu.Unlock()
	if !done {
		t.Fatalf("apply did not complete in %d runs through the storm; failures:\n%s", maxRuns, strings.Join(failures, "\n"))
	}
	cancel() // no more faults: the checks below must see the settled project
	st := f.Stats()
	t.Logf("%d requests, %d answered 429, %d answered 5xx; %d runs failed", st.Requests, st.RateLimited, st.ServerErrors, len(failures))

	// Every server gets an IPv4 and an IPv6 primary IP (publicNetwork
	// defaults to both), deleted with it: 10, and none orphaned.
	want := map[string]int{"servers": 5, "networks": 1, "firewalls": 1, "load_balancers": 1, "placement_groups": 2,
		"ssh_keys": 0, "images": 2, "volumes": 0, "primary_ips": 10}
	if got := f.Counts(); !equalCounts(got, want) {
		t.Errorf("after the storm the project holds %v, want %v", got, want)
	}
	if n := c.sb.Talos.Bootstraps(sp.Name); n != 1 {
		t.Errorf("etcd bootstrapped %d times, want once", n)
	}
	// A rerun of the finished cluster creates nothing.
	evs, err := c.apply(context.Background())
	if err != nil {
		t.Fatalf("apply after the storm: %v", err)
	}
	if n := evs.actions()["create"]; n != 0 {
		t.Errorf("apply after the storm created %d resources, want none", n)
	}
}

// checkFailure requires a failed run to name the failed step in its
// error, record it in a readable state, and leak no secret.
func checkFailure(t *testing.T, c *cluster, err error) {
	t.Helper()
	msg := err.Error()
	if strings.Contains(msg, c.sb.Token) {
		t.Errorf("error carries the API token: %q", msg)
	}
	st, oerr := c.openState()
	if oerr != nil {
		t.Fatalf("state unreadable after a failed run: %v", oerr)
	}
	failed := ""
	for name, ss := range st.Get().Steps {
		if ss.Status == state.StatusFailed {
			failed = name
			if ss.Error == "" {
				t.Errorf("step %s failed without recording why", name)
			}
		}
	}
	if failed == "" {
		t.Errorf("run failed (%v) but no step is marked failed in the state", err)
	} else if !strings.HasPrefix(msg, failed+": ") {
		t.Errorf("error %q does not start with the failed step %q", msg, failed)
	}
}

// checkNoDuplicates fails when any cluster resource exists twice: one
// network, firewall and load balancer, two placement groups, one server
// per node, one finished snapshot per image.
func checkNoDuplicates(t *testing.T, f *hcloudfake.Fake, when string) {
	t.Helper()
	counts := f.Counts()
	for kind, limit := range map[string]int{"networks": 1, "firewalls": 1, "load_balancers": 1, "placement_groups": 2} {
		if counts[kind] > limit {
			t.Errorf("%s: %d %s, at most %d may exist", when, counts[kind], kind, limit)
		}
	}
	perNode := map[string]int{}
	for _, s := range f.Servers() {
		if n := s.Labels[cloud.LabelNode]; n != "" {
			perNode[n]++
			if perNode[n] > 1 {
				t.Errorf("%s: node %s has %d servers", when, n, perNode[n])
			}
		}
	}
}

func equalCounts(got, want map[string]int) bool {
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

// TestFailedLoadBalancerCreateResumes: a create_load_balancer action that
// ends in error must not wedge the cluster; the next apply recovers.
func TestFailedLoadBalancerCreateResumes(t *testing.T) {
	t.Parallel()
	c := newCluster(t, loadSeed(t), sandbox.HetznerLatency(0.002), 2*time.Millisecond)
	c.sb.HCloud.FailActions("create_load_balancer", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var errs []string
	for run := 1; run <= 3; run++ {
		_, err := c.apply(ctx)
		if err == nil {
			checkNoDuplicates(t, c.sb.HCloud, "at the end")
			if n := c.sb.HCloud.Counts()["load_balancers"]; n != 1 {
				t.Errorf("%d load balancers, want 1", n)
			}
			return
		}
		checkFailure(t, c, err)
		errs = append(errs, fmt.Sprintf("run %d: %v", run, err))
	}
	t.Fatalf("apply never recovered from one failed create_load_balancer action:\n%s", strings.Join(errs, "\n"))
}
