package steps

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/doctor"
)

// TestDoctorAPIBudget: another cluster's controller in the same project
// creates a load balancer and then spends the project's hourly budget
// with reads; api-budget warns, names the other resources' actions, and
// says what the API cannot tell.
func TestDoctorAPIBudget(t *testing.T) {
	t.Parallel()
	c := appliedDoctorCluster(t)
	r := c.doctorResults(t, "api-budget")["api-budget"]
	if r.Status != doctor.StatusPass || !strings.Contains(strings.Join(r.Evidence, "\n"), "this cluster: server create_server") {
		t.Fatalf("api-budget after apply = %s, want pass naming this cluster's actions: %s", r.Status, describeResult(r))
	}
	ctx := context.Background()
	other := hcloud.NewClient(hcloud.WithEndpoint(c.sb.HCloudURL), hcloud.WithToken(c.sb.Token), hcloud.WithApplication("other-ccm", "v1"))
	if _, _, err := other.LoadBalancer.Create(ctx, hcloud.LoadBalancerCreateOpts{Name: "other-ingress",
		LoadBalancerType: &hcloud.LoadBalancerType{Name: "lb11"}, Location: &hcloud.Location{Name: "nbg1"},
		Labels: map[string]string{"ohmytalos.io/cluster": "other"}}); err != nil {
		t.Fatal(err)
	}
	_, resp, err := other.Location.List(ctx, hcloud.LocationListOpts{})
	if err != nil {
		t.Fatal(err)
	}
	left, err1 := strconv.Atoi(resp.Header.Get("RateLimit-Remaining"))
	limit, err2 := strconv.Atoi(resp.Header.Get("RateLimit-Limit"))
	if err1 != nil || err2 != nil {
		t.Fatalf("rate limit headers: %v", resp.Header)
	}
	spend := left - limit/20 // leave 5%: under the 10% warning, above zero
	var wg sync.WaitGroup
	work := make(chan struct{}, spend)
	for range spend {
		work <- struct{}{}
	}
	close(work)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range work {
				if _, _, err := other.Location.List(ctx, hcloud.LocationListOpts{}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	r = c.doctorResults(t, "api-budget")["api-budget"]
	all := strings.Join(r.Evidence, "\n") + "\n" + r.Explanation + "\n" + r.Fix
	if r.Status != doctor.StatusWarn {
		t.Fatalf("api-budget after the other controller's reads = %s, want warn: %s", r.Status, describeResult(r))
	}
	for _, want := range []string{"of 3600 requests left this hour", "other resources of the project: load balancer create_load_balancer × 1",
		"does not say which token or client", "fewer than 10%", "own project"} {
		if !strings.Contains(all, want) {
			t.Errorf("api-budget lacks %q: %s", want, describeResult(r))
		}
	}
}
