package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/sandbox"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

var (
	benchScale  = flag.Float64("bench.scale", 0.05, "latency model scale for the apply benchmarks (1 = Hetzner's real timings)")
	benchRoutes = flag.Bool("bench.routes", false, "print the API requests per route and the event timeline of each benchmarked apply")
)

// spec50 is a 50-node cluster: 3 control planes and 47 workers in three
// pools, so spread placement groups split at Hetzner's 10 servers.
const spec50 = `name: big
talos: {version: v1.13.9}
kubernetes: {version: "1.36.3"}
location: nbg1
network: {cidr: 10.0.0.0/16, zone: eu-central, pods: 10.42.0.0/16, services: 10.43.0.0/16}
controlPlane: {serverType: cpx22, count: 3, subnet: 10.0.1.0/24, vip: 10.0.1.100}
pools:
  - {name: general, serverType: cpx32, count: 22, subnet: 10.0.2.0/24, loadBalancer: true}
  - {name: batch, serverType: cpx42, count: 15, subnet: 10.0.3.0/24}
  - {name: edge, serverType: cpx22, count: 10, subnet: 10.0.4.0/24, loadBalancer: true}
loadBalancer: {type: lb11}
schematics:
  controlPlane: {extensions: [siderolabs/tailscale]}
  worker: {extensions: [siderolabs/iscsi-tools, siderolabs/util-linux-tools]}
secrets:
  hcloudToken: {provider: env, ref: HCLOUD_TOKEN}
`

func load50(tb testing.TB) *spec.Spec {
	tb.Helper()
	sp, err := spec.Parse([]byte(spec50))
	if err != nil {
		tb.Fatalf("50-node spec: %v", err)
	}
	if n := len(sp.Nodes()); n != 50 {
		tb.Fatalf("50-node spec has %d nodes", n)
	}
	return sp
}

// applyResult is one measured cold apply.
type applyResult struct {
	wall, critical time.Duration
	requests       int // the product's requests (User-Agent "ohmytalos")
	others         int // the sandbox's own clients' (cloud controller, Talos VIP)
	rateLimited    int
	byRoute        map[string]int // the product's
	otherRoutes    map[string]int // the sandbox clients', prefixed by their application
	steps          map[string]time.Duration
	events         *events
	start          time.Time
}

// coldApply applies sp once against a fresh sandbox paced by the latency
// model at scale and measures it against the critical path.
func coldApply(tb testing.TB, sp *spec.Spec, scale float64) applyResult {
	tb.Helper()
	o := sandbox.HetznerLatency(scale)
	// cloud.NewClient polls actions from 500ms (Deps.PollInterval 0): scale
	// it with everything else so the request count matches a real run.
	poll := time.Duration(float64(500*time.Millisecond) * scale)
	c := newCluster(tb, sp, o, poll)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	start := time.Now()
	evs, err := c.apply(ctx)
	wall := time.Since(start)
	if err != nil {
		tb.Fatalf("cold apply of %s: %v", sp.Name, err)
	}
	if got := c.sb.Talos.Bootstraps(sp.Name); got != 1 {
		tb.Fatalf("etcd bootstrapped %d times, want once", got)
	}
	counts := c.sb.HCloud.Counts()
	if counts["servers"] != len(sp.Nodes()) || counts["images"] != imageCount(tb, sp) || counts["ssh_keys"] != 0 ||
		counts["placement_groups"] != placementGroups(sp) {
		tb.Fatalf("after the apply the project holds %v: want %d servers, %d snapshots, %d placement groups, no ssh key",
			counts, len(sp.Nodes()), imageCount(tb, sp), placementGroups(sp))
	}
	st := c.sb.HCloud.Stats()
	r := applyResult{
		wall: wall, critical: sandbox.CriticalPath(o, sandbox.ImageRounds(imageCount(tb, sp), 0)),
		rateLimited: st.RateLimited, byRoute: map[string]int{}, otherRoutes: map[string]int{},
		steps: evs.stepTimes(), events: evs, start: start,
	}
	// Only the product's requests count against its budget: the sandbox's
	// cloud controller and Talos' VIP controller call the same fake, as
	// their real counterparts call Hetzner, under their own User-Agent.
	for agent, rs := range st.ByAgent {
		for route, n := range rs {
			if agent == productAgent {
				r.requests += n
				r.byRoute[route] += n
				continue
			}
			r.others += n
			r.otherRoutes[agent+" "+route] += n
		}
	}
	return r
}

// productAgent is the application name cloud.NewClient gives hcloud-go
// (hcloud.WithApplication), the first token of the product's User-Agent.
const productAgent = "ohmytalos"

func benchmarkApply(b *testing.B, sp *spec.Spec) {
	var wall, critical time.Duration
	var requests, others, limited int
	for i := 0; i < b.N; i++ {
		r := coldApply(b, sp, *benchScale)
		wall += r.wall
		critical += r.critical
		requests += r.requests
		others += r.others
		limited += r.rateLimited
		if *benchRoutes {
			// Printed, not logged: benchmark logs are cut after a few lines.
			fmt.Fprintf(os.Stderr, "%s: wall %v, critical path %v, steps %v\nproduct requests:\n%ssandbox clients' requests:\n%s%s",
				sp.Name, r.wall, r.critical, r.steps, routes(r.byRoute), routes(r.otherRoutes), r.events.timeline(r.start))
		}
	}
	if limited > 0 {
		b.Errorf("%s: %d requests answered 429: apply must stay inside Hetzner's rate limit", sp.Name, limited)
	}
	n := float64(b.N)
	b.ReportMetric(float64(wall)/float64(critical), "critical-path-ratio")
	b.ReportMetric(float64(requests)/n, "api-requests")
	b.ReportMetric(float64(requests)/n/float64(len(sp.Nodes())), "api-requests/node")
	b.ReportMetric(float64(others)/n, "sandbox-api-requests")
	b.ReportMetric(float64(limited)/n, "429s")
	b.ReportMetric(wall.Seconds()/n, "wall-s")
}

// BenchmarkApplySeed is a cold apply of examples/seed.yaml, images and
// add-ons included: it ends when every node is Ready with a provider ID and
// the add-on workloads are ready. Targets at -bench.scale=0.25 (issue 12):
// critical-path-ratio <= 1.10, api-requests (the product's own) <= 110.
func BenchmarkApplySeed(b *testing.B) { benchmarkApply(b, loadSeed(b)) }

// BenchmarkApply50 is a cold apply of 50 nodes. Targets: no 429,
// api-requests <= 10 per node.
func BenchmarkApply50(b *testing.B) { benchmarkApply(b, load50(b)) }

// placementGroups is how many spread groups sp needs: Hetzner puts at
// most 10 servers in one, so a pool of n nodes needs ceil(n/10).
func placementGroups(sp *spec.Spec) int {
	n := (sp.ControlPlane.Count + 9) / 10
	for _, p := range sp.Pools {
		n += (p.Count + 9) / 10
	}
	return n
}

// routes formats request counts per route, busiest first.
func routes(m map[string]int) string {
	type kv struct {
		k string
		v int
	}
	var all []kv
	for k, v := range m {
		all = append(all, kv{k, v})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v > all[j].v || all[i].v == all[j].v && all[i].k < all[j].k })
	var sb strings.Builder
	for _, e := range all {
		fmt.Fprintf(&sb, "%5d %s\n", e.v, e.k)
	}
	return sb.String()
}
