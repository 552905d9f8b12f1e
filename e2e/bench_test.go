package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/ohmytalos/ohmytalos/internal/addons"
	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/sandbox"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/kubereal"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

var (
	benchScale  = flag.String("bench.scale", "0.05", "latency model scales for the apply benchmarks, comma-separated: one sub-benchmark each (1 = Hetzner's real timings)")
	benchRoutes = flag.Bool("bench.routes", false, "print the API requests per route, the event timeline and the pods' timeline of each benchmarked apply")
)

// benchScales parses -bench.scale.
func benchScales(tb testing.TB) []float64 {
	tb.Helper()
	var out []float64
	for f := range strings.SplitSeq(*benchScale, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || v <= 0 {
			tb.Fatalf("-bench.scale: %q is not a positive number", f)
		}
		out = append(out, v)
	}
	return out
}

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
	wall        time.Duration
	path        sandbox.Path
	requests    int // the product's requests (User-Agent "ohmytalos")
	others      int // the sandbox's own clients' (cloud controller, Talos VIP)
	rateLimited int
	byRoute     map[string]int // the product's
	otherRoutes map[string]int // the sandbox clients', prefixed by their application
	steps       map[string]time.Duration
	events      *events
	start       time.Time
	pods        string // podTimeline, with -bench.routes
	rssKiB      int    // the control plane's processes' peak RSS, summed
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
		wall: wall, path: sandbox.CriticalPath(o, sandbox.Run{ImageRounds: sandbox.ImageRounds(imageCount(tb, sp), 0),
			Kube: kubeTrace(tb, c), LBActions: lbActions(sp)}),
		rssKiB:      peakRSS(tb, c),
		rateLimited: st.RateLimited, byRoute: map[string]int{}, otherRoutes: map[string]int{},
		steps: evs.stepTimes(), events: evs, start: start,
	}
	if *benchRoutes {
		r.pods = podTimeline(tb, c, start)
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

// benchmarkApply runs one sub-benchmark per -bench.scale and, with more
// than one, logs how far their critical-path ratios are apart: a wait
// left at real time makes the ratio grow as the scale shrinks.
func benchmarkApply(b *testing.B, sp *spec.Spec) {
	ratios := map[float64]float64{}
	scales := benchScales(b)
	for _, scale := range scales {
		b.Run(fmt.Sprintf("scale=%g", scale), func(b *testing.B) { ratios[scale] = benchmarkApplyAt(b, sp, scale) })
	}
	if len(scales) > 1 {
		lo, hi := ratios[scales[0]], ratios[scales[0]]
		var parts []string
		for _, s := range scales {
			lo, hi = min(lo, ratios[s]), max(hi, ratios[s])
			parts = append(parts, fmt.Sprintf("%.3f at scale %g", ratios[s], s))
		}
		// Printed: a parent benchmark's log is not shown.
		fmt.Printf("%s: critical-path-ratio %s: %.3f apart\n", b.Name(), strings.Join(parts, ", "), hi-lo)
	}
}

// benchmarkApplyAt measures b.N cold applies at one scale and reports
// the critical path's terms (seconds, per apply) beside the ratio.
func benchmarkApplyAt(b *testing.B, sp *spec.Spec, scale float64) float64 {
	var wall time.Duration
	var path sandbox.Path
	var requests, others, limited, rss int
	for i := 0; i < b.N; i++ {
		r := coldApply(b, sp, scale)
		wall += r.wall
		path = addPaths(path, r.path)
		requests += r.requests
		others += r.others
		limited += r.rateLimited
		rss = max(rss, r.rssKiB)
		if *benchRoutes {
			// Printed, not logged: benchmark logs are cut after a few lines.
			fmt.Fprintf(os.Stderr, "%s: wall %v, critical path %v (%+v), steps %v\nproduct requests:\n%ssandbox clients' requests:\n%s%s",
				sp.Name, r.wall, r.path.Total(), r.path, r.steps, routes(r.byRoute), routes(r.otherRoutes), r.events.timeline(r.start))
			fmt.Fprint(os.Stderr, r.pods, lbProgress(r.events, r.start))
		}
	}
	if limited > 0 {
		b.Errorf("%s: %d requests answered 429: apply must stay inside Hetzner's rate limit", sp.Name, limited)
	}
	n := float64(b.N)
	ratio := float64(wall) / float64(path.Total())
	b.ReportMetric(ratio, "critical-path-ratio")
	b.ReportMetric(float64(requests)/n, "api-requests")
	b.ReportMetric(float64(requests)/n/float64(len(sp.Nodes())), "api-requests/node")
	b.ReportMetric(float64(others)/n, "sandbox-api-requests")
	b.ReportMetric(float64(limited)/n, "429s")
	b.ReportMetric(wall.Seconds()/n, "wall-s")
	b.ReportMetric(path.Total().Seconds()/n, "path-s")
	for _, t := range []struct {
		name string
		d    time.Duration
	}{
		{"images", path.Images}, {"node", path.Node}, {"control-plane", path.ControlPlane}, {"pod-starts", path.PodStarts},
		{"pulls", path.Pulls}, {"lb-actions", path.LBActions}, {"health-check", path.HealthCheck},
	} {
		b.ReportMetric(t.d.Seconds()/n, "path-"+t.name+"-s")
	}
	b.ReportMetric(float64(rss)/1024, "peak-rss-MiB/cluster")
	return ratio
}

// addPaths sums two paths term by term.
func addPaths(a, b sandbox.Path) sandbox.Path {
	return sandbox.Path{Images: a.Images + b.Images, Node: a.Node + b.Node, ControlPlane: a.ControlPlane + b.ControlPlane,
		PodStarts: a.PodStarts + b.PodStarts, Pulls: a.Pulls + b.Pulls, LBActions: a.LBActions + b.LBActions, HealthCheck: a.HealthCheck + b.HealthCheck}
}

// BenchmarkApplySeed is a cold apply of examples/seed.yaml, images and
// add-ons included: it ends when every node is Ready with a provider ID,
// the add-on workloads are ready and the ingress load balancer's targets
// are healthy. Targets (issue 29), at -bench.scale=0.25,0.5 in one run:
// critical-path-ratio <= 1.10 at both, within 0.05 of each other;
// api-requests (the product's own) <= 110.
func BenchmarkApplySeed(b *testing.B) { benchmarkApply(b, loadSeed(b)) }

// BenchmarkApply50 is a cold apply of 50 nodes. Targets: no 429,
// api-requests <= 6 per node.
func BenchmarkApply50(b *testing.B) { benchmarkApply(b, load50(b)) }

// kubeTrace is the cluster's control plane trace (its start and its pods'
// modelled waits); zero when no control plane ran.
func kubeTrace(tb testing.TB, c *cluster) kubereal.Trace {
	tb.Helper()
	ts := c.sb.Talos.RealKubernetesTraces()
	if len(ts) != 1 {
		tb.Fatalf("%d real control planes ran, want one", len(ts))
	}
	return ts[0]
}

// ingressPorts are the load balancer services the cloud controller adds
// for Traefik's Service: web (80) and websecure (443).
const ingressPorts = 2

// lbActions is sandbox.Run.LBActions for sp: a service per ingress port
// and a target per node in a load-balanced pool.
func lbActions(sp *spec.Spec) int {
	if !sp.Addons.Ingress.On() || addons.LBNodes(sp) == 0 {
		return 0
	}
	return ingressPorts + addons.LBNodes(sp)
}

// peakRSS sums the peak resident set (VmHWM) of the control plane's
// processes (etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler), read at the end of the apply: the kernel keeps the
// peak, so one read at the end samples the whole run. 0 off Linux.
func peakRSS(tb testing.TB, c *cluster) int {
	tb.Helper()
	total := 0
	for _, p := range c.sb.Talos.RealKubernetesProcesses() {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.PID))
		if err != nil {
			return 0
		}
		for line := range strings.Lines(string(b)) {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
				kib, err := strconv.Atoi(f[1])
				if err != nil {
					tb.Fatalf("%s (pid %d): VmHWM %q: %v", p.Name, p.PID, f[1], err)
				}
				if *benchRoutes {
					fmt.Fprintf(os.Stderr, "peak RSS %s: %d MiB\n", p.Name, kib/1024)
				}
				total += kib
			}
		}
	}
	return total
}

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

// lbProgress is the timeline of the image builds, the readiness wait and the ingress load balancer's wait.
func lbProgress(e *events, start time.Time) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var b strings.Builder
	for _, ev := range e.all {
		if ev.Kind == engine.KindProgress && (strings.HasPrefix(ev.Resource, "lb/") || strings.HasPrefix(ev.Resource, "image/") || ev.Resource == "nodes") {
			fmt.Fprintf(&b, "%8.3fs progress %s %s\n", ev.Time.Sub(start).Seconds(), ev.Resource, ev.Message)
		}
	}
	return b.String()
}

// podTimeline lists, from the cluster's API server, when each pod was
// created, scheduled, and Ready, and when each node turned Ready, as
// offsets from start: where the add-ons' time goes.
func podTimeline(tb testing.TB, c *cluster, start time.Time) string {
	tb.Helper()
	st, err := c.openState()
	if err != nil {
		return err.Error()
	}
	kc, err := st.Secret("kubeconfig")
	if err != nil {
		return err.Error()
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kc)
	if err != nil {
		return err.Error()
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err.Error()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	off := func(t metav1.Time) string {
		if t.IsZero() {
			return "-"
		}
		return fmt.Sprintf("%.3f", t.Sub(start).Seconds())
	}
	var b strings.Builder
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	for _, n := range nodes.Items {
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady {
				fmt.Fprintf(&b, "node %-16s created %8s ready %8s\n", n.Name, off(n.CreationTimestamp), off(cond.LastTransitionTime))
			}
		}
	}
	pods, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	for _, p := range pods.Items {
		var sched, ready metav1.Time
		for _, cond := range p.Status.Conditions {
			switch cond.Type {
			case corev1.PodScheduled:
				sched = cond.LastTransitionTime
			case corev1.PodReady:
				if cond.Status == corev1.ConditionTrue {
					ready = cond.LastTransitionTime
				}
			}
		}
		fmt.Fprintf(&b, "pod %-60s %-14s created %8s scheduled %8s ready %8s\n", p.Namespace+"/"+p.Name, p.Spec.NodeName,
			off(p.CreationTimestamp), off(sched), off(ready))
	}
	evs, err := cs.CoreV1().Events("").List(ctx, metav1.ListOptions{})
	if err == nil {
		for _, e := range evs.Items {
			if e.Type == corev1.EventTypeWarning || e.Reason == "Scheduled" {
				fmt.Fprintf(&b, "event %8s %s %s/%s %s: %s\n", off(e.LastTimestamp), e.Type, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
			}
		}
	}
	return b.String()
}
