package steps

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/cloud"

	"github.com/ohmytalos/ohmytalos/internal/engine"
	"github.com/ohmytalos/ohmytalos/internal/spec"
)

// planRequests plans w's spec and returns the product's requests by route.
func planRequests(t *testing.T, w *world) map[string]int {
	t.Helper()
	before := w.SB.HCloud.Stats().ByAgent["ohmytalos"]
	if _, err := engine.New(All(w.deps())...).Plan(context.Background(), w.env(t)); err != nil {
		t.Fatal(err)
	}
	out := maps.Clone(w.SB.HCloud.Stats().ByAgent["ohmytalos"])
	for k, v := range before {
		out[k] -= v
		if out[k] == 0 {
			delete(out, k)
		}
	}
	return out
}

// tenfold gives the spec ten times its pools (new names and subnets).
func tenfold(sp *spec.Spec) {
	base := sp.Pools
	sp.Pools = nil
	for i := range 10 {
		for _, p := range base {
			p.Name = fmt.Sprintf("%s%d", p.Name, i)
			p.Subnet = fmt.Sprintf("10.0.%d.0/24", 10+len(sp.Pools))
			sp.Pools = append(sp.Pools, p)
		}
	}
}

// TestPlanListsAreConstant is issue 21 item 7: plan asks Hetzner with a
// constant number of list calls per resource kind, whatever the number of
// pools, fresh and applied.
func TestPlanListsAreConstant(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "../examples/seed.yaml")
	seed := planRequests(t, w)
	big := newWorld(t, "../examples/seed.yaml")
	tenfold(big.Spec)
	if ps := big.Spec.Validate(); len(ps) > 0 {
		t.Fatal(ps)
	}
	large := planRequests(t, big)
	if !maps.Equal(seed, large) {
		t.Errorf("plan requests differ with 10x the pools:\nseed  %v\nlarge %v", seed, large)
	}
	t.Logf("plan of the seed: %v", seed)
}

// TestPlanOfAnAppliedClusterListsOnce: on an applied cluster, plan finds
// the resources that grow with the pools (servers, placement groups,
// volumes, primary IPs) from their kind's one list, never with a GET per
// object; the network, firewall and load balancers, one or two whatever
// the pools, may be read by their stored IDs.
func TestPlanOfAnAppliedClusterListsOnce(t *testing.T) {
	t.Parallel()
	w := appliedWorld(t)
	total := 0
	reqs := planRequests(t, w)
	for route, n := range reqs {
		total += n
		for _, kind := range []string{"servers", "placement_groups", "volumes", "primary_ips"} {
			if strings.HasPrefix(route, "GET /"+kind+"/{id}") {
				t.Errorf("plan sent %d %s: a request per object", n, route)
			}
		}
	}
	if total > 15 {
		t.Errorf("plan of the applied seed sent %d requests: %v", total, reqs)
	}
	t.Logf("plan of the applied seed: %d requests %v", total, reqs)
}

// TestPlanStopsAtTheFirst429: a spent budget stops plan at its first 429
// with a message, instead of hcloud-go retrying it.
func TestPlanStopsAtTheFirst429(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "../examples/seed.yaml")
	w.SB.HCloud.InjectStatus("", "/", http.StatusTooManyRequests, 1000)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := engine.New(All(w.deps())...).Plan(ctx, w.env(t))
	var rl *cloud.RateLimitedError
	if !errors.As(err, &rl) || !strings.Contains(err.Error(), "429 rate_limit_exceeded") || !strings.Contains(err.Error(), "stopped rather than wait") {
		t.Fatalf("plan: %v, want the rate limit's message", err)
	}
	if n := w.SB.HCloud.Stats().RateLimited; n != 1 {
		t.Errorf("plan sent %d requests answered 429, want to stop at the first", n)
	}
}
