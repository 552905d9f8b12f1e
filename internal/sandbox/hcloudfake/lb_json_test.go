package hcloudfake_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/openapicheck"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/hcloudfake"
)

// Each kind of load balancer target carries only the fields of its kind,
// none of them null, as Hetzner's API description has it
// (components.schemas.load_balancer_target: server, ip and health_status
// are not nullable); every exchange is checked against the description
// when it is there.
func TestLoadBalancerTargetsCarryOnlyTheirKindsFields(t *testing.T) {
	e, rec := newRecordedEnv(t)
	c := e.client
	s := e.newServer(t, hcloud.ServerCreateOpts{Name: "w", Labels: map[string]string{"pool": "worker"}})
	lb := e.newTCPLoadBalancer(t, 80, 80)
	for _, add := range []func() (*hcloud.Action, *hcloud.Response, error){
		func() (*hcloud.Action, *hcloud.Response, error) {
			return c.LoadBalancer.AddServerTarget(ctx(t), lb, hcloud.LoadBalancerAddServerTargetOpts{Server: s})
		},
		func() (*hcloud.Action, *hcloud.Response, error) {
			return c.LoadBalancer.AddLabelSelectorTarget(ctx(t), lb, hcloud.LoadBalancerAddLabelSelectorTargetOpts{Selector: "pool=worker"})
		},
		func() (*hcloud.Action, *hcloud.Response, error) {
			return c.LoadBalancer.AddIPTarget(ctx(t), lb, hcloud.LoadBalancerAddIPTargetOpts{IP: net.ParseIP("203.0.113.5")})
		},
	} {
		if _, _, err := add(); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := c.LoadBalancer.GetByID(ctx(t), lb.ID); err != nil {
		t.Fatal(err)
	}
	targets := rawTargets(t, e, lb.ID)
	want := map[string][]string{
		"server":         {"health_status", "server", "type", "use_private_ip"},
		"label_selector": {"label_selector", "targets", "type", "use_private_ip"},
		"ip":             {"health_status", "ip", "type", "use_private_ip"},
	}
	for _, tg := range targets {
		typ, _ := tg["type"].(string)
		if keys := keysOf(tg); !slices.Equal(keys, want[typ]) {
			t.Errorf("%s target has %v, want %v", typ, keys, want[typ])
		}
		if typ == "label_selector" {
			nested, _ := tg["targets"].([]any)
			if len(nested) != 1 {
				t.Fatalf("label selector targets = %v, want server w", tg["targets"])
			}
			if keys := keysOf(nested[0].(map[string]any)); !slices.Equal(keys, want["server"]) {
				t.Errorf("selected target has %v, want %v", keys, want["server"])
			}
		}
	}
	if len(targets) != 3 {
		t.Errorf("targets = %v", targets)
	}
	checkAgainstDescription(t, rec)
}

// newRecordedEnv is newPlainEnv with every exchange recorded.
func newRecordedEnv(t *testing.T) (*env, *openapicheck.Recorder) {
	t.Helper()
	f := hcloudfake.New(hcloudfake.Options{Token: token})
	rec := openapicheck.NewRecorder(f)
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	return &env{fake: f, url: srv.URL, client: hcloud.NewClient(hcloud.WithEndpoint(srv.URL), hcloud.WithToken(token),
		hcloud.WithPollOpts(hcloud.PollOpts{BackoffFunc: hcloud.ConstantBackoff(2 * time.Millisecond)}))}, rec
}

// rawTargets reads a load balancer's targets as JSON objects.
func rawTargets(t *testing.T, e *env, id int64) []map[string]any {
	t.Helper()
	status, body := rawJSON(t, e, http.MethodGet, "/load_balancers/"+strconv.FormatInt(id, 10), "")
	lb, _ := body["load_balancer"].(map[string]any)
	if status != http.StatusOK || lb == nil {
		t.Fatalf("get load balancer %d: %d %v", id, status, body)
	}
	var out []map[string]any
	for _, x := range lb["targets"].([]any) {
		out = append(out, x.(map[string]any))
	}
	return out
}

// keysOf lists an object's keys, sorted, failing on a null value.
func keysOf(m map[string]any) []string {
	var keys []string
	for k, v := range m {
		if v != nil {
			keys = append(keys, k)
		} else {
			keys = append(keys, k+"=null")
		}
	}
	slices.Sort(keys)
	return keys
}

// checkAgainstDescription checks what rec recorded against Hetzner's
// API description, when the file is there.
func checkAgainstDescription(t *testing.T, rec *openapicheck.Recorder) {
	t.Helper()
	p, ok := openapicheck.LocateHCloud()
	if !ok {
		t.Logf("Hetzner's API description %s is absent: exchanges not checked against it", p)
		return
	}
	checker, err := openapicheck.LoadHCloudFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var vs []openapicheck.Violation
	ops := map[string]bool{}
	for _, ex := range rec.Exchanges() {
		ops[checker.Operation(ex.Method, ex.Path)] = true
		vs = append(vs, checker.Check(ex)...)
	}
	for _, v := range openapicheck.Dedupe(vs) {
		t.Errorf("violates the API description: %s", v)
	}
	delete(ops, "")
	t.Logf("%d exchanges checked, %d distinct operations, %d violations", len(rec.Exchanges()), len(ops), len(vs))
}

// Deleting a load balancer answers 201 with its action, as Hetzner does
// since 2026-10-05 (docs.hetzner.cloud/changelog#2026-10-05-delete-load-balancer-returns-action).
func TestDeletingALoadBalancerReturnsItsAction(t *testing.T) {
	e, c := newPlainEnv(t)
	res, _, err := c.LoadBalancer.Create(ctx(t), hcloud.LoadBalancerCreateOpts{Name: "lb",
		LoadBalancerType: &hcloud.LoadBalancerType{Name: "lb11"}, Location: &hcloud.Location{Name: "fsn1"}})
	if err != nil {
		t.Fatal(err)
	}
	del, resp, err := c.LoadBalancer.DeleteWithResult(ctx(t), res.LoadBalancer)
	if err != nil || resp.StatusCode != http.StatusCreated || del.Action == nil || del.Action.Command != "delete_load_balancer" {
		t.Fatalf("delete = %+v, %v, %v", del, resp, err)
	}
	e.wait(t, del.Action)
	if got, _, err := c.LoadBalancer.GetByID(ctx(t), res.LoadBalancer.ID); err != nil || got != nil {
		t.Errorf("after delete: %+v, %v", got, err)
	}
}
