package hcloudfake_test

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hetznercloud/hcloud-go/v2/hcloud"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/hcloudfake"
)

func TestInjected429IsRetriedTransparently(t *testing.T) {
	e := newEnv(t, hcloudfake.Options{})
	e.fake.InjectStatus(http.MethodGet, "/servers", http.StatusTooManyRequests, 3)
	servers, err := e.client.Server.All(ctx(t))
	if err != nil {
		t.Fatalf("list servers through a 429 burst: %v", err)
	}
	if len(servers) != 0 {
		t.Errorf("got %d servers, want 0", len(servers))
	}
	st := e.fake.Stats()
	if st.RateLimited != 3 || st.ByRoute["GET /servers"] != 4 {
		t.Errorf("stats = %+v, want 3 rate limited and 4 GET /servers", st)
	}
	// Injections are used up: the next request succeeds at once.
	if _, err := e.client.Server.All(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if got := e.fake.Stats().ByRoute["GET /servers"]; got != 5 {
		t.Errorf("GET /servers = %d, want 5", got)
	}
}

func TestInjectedServerErrorCarriesCode(t *testing.T) {
	e := newEnv(t, hcloudfake.Options{})
	e.fake.InjectStatus("", "/networks", http.StatusInternalServerError, 1)
	_, err := e.client.Network.All(ctx(t))
	if !hcloud.IsError(err, hcloud.ErrorCodeServerError) {
		t.Fatalf("err = %v, want server_error", err)
	}
	if e.fake.Stats().ServerErrors != 1 {
		t.Errorf("server errors = %d, want 1", e.fake.Stats().ServerErrors)
	}
	// 502 is retried by hcloud-go.
	e.fake.InjectStatus("", "/networks", http.StatusBadGateway, 2)
	if _, err := e.client.Network.All(ctx(t)); err != nil {
		t.Fatalf("502 burst not retried: %v", err)
	}
}

func TestRateLimitHeadersAndBucket(t *testing.T) {
	clk := newClock()
	e := newEnv(t, hcloudfake.Options{RateLimit: 3, RefillEvery: time.Second, Now: clk.Now},
		hcloud.WithRetryOpts(hcloud.RetryOpts{BackoffFunc: hcloud.ConstantBackoff(time.Millisecond), MaxRetries: 0}))
	var remaining []int
	for range 3 {
		_, resp, err := e.client.Location.List(ctx(t), hcloud.LocationListOpts{})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Meta.Ratelimit.Limit != 3 {
			t.Errorf("RateLimit-Limit = %d, want 3", resp.Meta.Ratelimit.Limit)
		}
		remaining = append(remaining, resp.Meta.Ratelimit.Remaining)
	}
	if remaining[0] != 2 || remaining[1] != 1 || remaining[2] != 0 {
		t.Errorf("RateLimit-Remaining = %v, want [2 1 0]", remaining)
	}
	_, resp, err := e.client.Location.List(ctx(t), hcloud.LocationListOpts{})
	if !hcloud.IsError(err, hcloud.ErrorCodeRateLimitExceeded) {
		t.Fatalf("empty bucket: err = %v, want rate_limit_exceeded", err)
	}
	if want := clk.Now().Add(3 * time.Second).Unix(); resp.Meta.Ratelimit.Reset.Unix() != want {
		t.Errorf("RateLimit-Reset = %v, want %v", resp.Meta.Ratelimit.Reset.Unix(), want)
	}
	clk.Add(1500 * time.Millisecond) // one token refilled
	_, resp, err = e.client.Location.List(ctx(t), hcloud.LocationListOpts{})
	if err != nil || resp.Meta.Ratelimit.Remaining != 0 {
		t.Fatalf("after refill: remaining %d, err %v", resp.Meta.Ratelimit.Remaining, err)
	}
	if _, _, err = e.client.Location.List(ctx(t), hcloud.LocationListOpts{}); !hcloud.IsError(err, hcloud.ErrorCodeRateLimitExceeded) {
		t.Fatalf("half a token must not be enough: %v", err)
	}
	clk.Add(time.Hour)
	_, resp, err = e.client.Location.List(ctx(t), hcloud.LocationListOpts{})
	if err != nil || resp.Meta.Ratelimit.Remaining != 2 {
		t.Fatalf("after an hour: remaining %d (want 2), err %v", resp.Meta.Ratelimit.Remaining, err)
	}
}

func TestReadOnlyTokenAndBadToken(t *testing.T) {
	e := newEnv(t, hcloudfake.Options{ReadOnly: true})
	if _, err := e.client.ServerType.All(ctx(t)); err != nil {
		t.Fatalf("read with a read-only token: %v", err)
	}
	_, _, err := e.client.SSHKey.Create(ctx(t), hcloud.SSHKeyCreateOpts{Name: "k", PublicKey: "ssh-ed25519 AAAA"})
	if !hcloud.IsError(err, hcloud.ErrorCodeForbidden) {
		t.Fatalf("write with a read-only token: %v, want forbidden", err)
	}

	bad := hcloud.NewClient(hcloud.WithEndpoint(e.url), hcloud.WithToken("wrong"))
	if _, err := bad.Server.All(ctx(t)); !hcloud.IsError(err, hcloud.ErrorCodeUnauthorized) {
		t.Fatalf("wrong token: %v, want unauthorized", err)
	}
}

func TestErrorCodes(t *testing.T) {
	e, c := newPlainEnv(t)

	s, _, err := c.Server.GetByID(ctx(t), 424242)
	if err != nil || s != nil {
		t.Fatalf("GetByID of a missing server = %v, %v; want nil, nil (hcloud-go maps not_found)", s, err)
	}
	if _, err := c.Server.Delete(ctx(t), &hcloud.Server{ID: 424242}); !hcloud.IsError(err, hcloud.ErrorCodeNotFound) {
		t.Errorf("delete missing server: %v, want not_found", err)
	}

	create := func(name string) error {
		_, _, err := c.Network.Create(ctx(t), hcloud.NetworkCreateOpts{Name: name, IPRange: mustCIDR(t, "10.0.0.0/16")})
		return err
	}
	if err := create("dup"); err != nil {
		t.Fatal(err)
	}
	if err := create("dup"); !hcloud.IsError(err, hcloud.ErrorCodeUniquenessError) {
		t.Errorf("duplicate network name: %v, want uniqueness_error", err)
	}
	_, _, err = c.Network.Create(ctx(t), hcloud.NetworkCreateOpts{Name: "v6", IPRange: mustCIDR(t, "fd00::/64")})
	if !hcloud.IsError(err, hcloud.ErrorCodeInvalidInput) {
		t.Errorf("ipv6 network range: %v, want invalid_input", err)
	}

	opts := hcloud.ServerCreateOpts{Name: "big", ServerType: &hcloud.ServerType{Name: "cx23"}, Image: &hcloud.Image{Name: "debian-12"},
		Location: &hcloud.Location{Name: "nbg1"}, UserData: strings.Repeat("x", 32*1024+1)}
	_, _, err = c.Server.Create(ctx(t), opts)
	var herr hcloud.Error
	if !hcloud.IsError(err, hcloud.ErrorCodeInvalidInput) || !errors.As(err, &herr) {
		t.Fatalf("oversized user_data: %v, want invalid_input", err)
	}
	if details, ok := herr.Details.(hcloud.ErrorDetailsInvalidInput); !ok || len(details.Fields) != 1 || details.Fields[0].Name != "user_data" {
		t.Errorf("invalid_input details = %#v, want the user_data field", herr.Details)
	}

	e.fake.SetUnavailable("cx23", "nbg1")
	opts.UserData = "ok"
	if _, _, err = c.Server.Create(ctx(t), opts); !hcloud.IsError(err, hcloud.ErrorCodeResourceUnavailable) {
		t.Errorf("unavailable type: %v, want resource_unavailable", err)
	}
	opts.Location = &hcloud.Location{Name: "fsn1"}
	opts.ServerType = &hcloud.ServerType{Name: "cpx11"} // no longer orderable in the EU
	if _, _, err = c.Server.Create(ctx(t), opts); !hcloud.IsError(err, hcloud.ErrorCodeResourceUnavailable) {
		t.Errorf("deprecated-in-location type: %v, want resource_unavailable", err)
	}
	opts.ServerType = &hcloud.ServerType{Name: "cax11"}
	res, _, err := c.Server.Create(ctx(t), opts)
	if err != nil {
		t.Fatalf("arm server: %v", err)
	}
	if res.Server.Image.Architecture != hcloud.ArchitectureARM || res.RootPassword == "" {
		t.Errorf("arm server image = %+v, root password %q: want the arm debian-12 and a password", res.Server.Image, res.RootPassword)
	}
	if _, _, err = c.Server.Create(ctx(t), opts); !hcloud.IsError(err, hcloud.ErrorCodeUniquenessError) {
		t.Errorf("duplicate server name: %v, want uniqueness_error", err)
	}

	pg, _, err := c.PlacementGroup.Create(ctx(t), hcloud.PlacementGroupCreateOpts{Name: "full", Type: hcloud.PlacementGroupTypeSpread})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 11 {
		_, _, err := c.Server.Create(ctx(t), hcloud.ServerCreateOpts{Name: "pg-" + strconv.Itoa(i), ServerType: &hcloud.ServerType{Name: "cx23"},
			Image: &hcloud.Image{Name: "debian-12"}, Location: &hcloud.Location{Name: "hel1"}, PlacementGroup: pg.PlacementGroup})
		if i < 10 && err != nil {
			t.Fatalf("server %d in placement group: %v", i, err)
		}
		if i == 10 && !hcloud.IsError(err, hcloud.ErrorCodePlacementError) {
			t.Errorf("11th server in a spread group: %v, want placement_error", err)
		}
	}

	fw, _, err := c.Firewall.Create(ctx(t), hcloud.FirewallCreateOpts{Name: "used", ApplyTo: []hcloud.FirewallResource{{
		Type: hcloud.FirewallResourceTypeLabelSelector, LabelSelector: &hcloud.FirewallResourceLabelSelector{Selector: "a=b"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Firewall.Delete(ctx(t), fw.Firewall); !hcloud.IsError(err, hcloud.ErrorCodeResourceInUse) {
		t.Errorf("delete applied firewall: %v, want resource_in_use", err)
	}
	acts, _, err := c.Firewall.RemoveResources(ctx(t), fw.Firewall, fw.Firewall.AppliedTo)
	if err != nil {
		t.Fatal(err)
	}
	e.wait(t, acts...)
	if _, err := c.Firewall.Delete(ctx(t), fw.Firewall); err != nil {
		t.Errorf("delete unapplied firewall: %v", err)
	}
}

func TestStatsCountRequestsPerApplication(t *testing.T) {
	e := newEnv(t, hcloudfake.Options{}, hcloud.WithApplication("ohmytalos", "test"))
	other := hcloud.NewClient(hcloud.WithEndpoint(e.url), hcloud.WithToken(token), hcloud.WithApplication("hcloud-cloud-controller-manager", "sandbox"))
	if _, err := e.client.Server.All(ctx(t)); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := other.Network.All(ctx(t)); err != nil {
			t.Fatal(err)
		}
	}
	st := e.fake.Stats()
	if got := st.ByAgent["ohmytalos"]["GET /servers"]; got != 1 || len(st.ByAgent["ohmytalos"]) != 1 {
		t.Errorf("ohmytalos requests = %v, want one GET /servers", st.ByAgent["ohmytalos"])
	}
	if got := st.ByAgent["hcloud-cloud-controller-manager"]["GET /networks"]; got != 2 {
		t.Errorf("cloud controller GET /networks = %d, want 2 (all: %v)", got, st.ByAgent)
	}
	if st.Requests != 3 {
		t.Errorf("requests = %d, want 3", st.Requests)
	}
}
