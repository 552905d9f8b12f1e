package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestRunConcurrentTimeoutsAndOrder(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	registry := []Check{
		{ID: "slow", Title: "ignores its context", Timeout: 50 * time.Millisecond, Run: func(ctx context.Context, env *Env) Result {
			<-block
			return pass()
		}},
		{ID: "ok", Title: "passes", Run: func(ctx context.Context, env *Env) Result { return pass("fine") }},
		{ID: "boom", Title: "panics", Run: func(ctx context.Context, env *Env) Result { panic("nil map") }},
		{ID: "ctx", Title: "honours its context", Timeout: 20 * time.Millisecond, Run: func(ctx context.Context, env *Env) Result {
			<-ctx.Done()
			return sourceError("the Talos API", ctx.Err())
		}},
	}
	var mu sync.Mutex
	var reported []string
	start := time.Now()
	rs := runChecks(context.Background(), &Env{}, registry, nil, func(r Result) {
		mu.Lock()
		reported = append(reported, r.ID)
		mu.Unlock()
	})
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("run took %s: a blocked check held up the report", d)
	}
	if got := ids(rs); got != "slow,ok,boom,ctx" {
		t.Fatalf("results in order %s", got)
	}
	if len(reported) != 4 {
		t.Fatalf("reported %v", reported)
	}
	expect(t, rs[0], StatusError, "did not finish within 50ms")
	expect(t, rs[1], StatusPass, "fine")
	expect(t, rs[2], StatusError, "the check crashed: nil map", "bug in ohmytalos")
	expect(t, rs[3], StatusError, "did not finish within 20ms", "last error: could not read the Talos API")
	if rs[1].Title != "passes" || rs[1].Duration <= 0 {
		t.Errorf("title/duration not set: %+v", rs[1])
	}
	if ExitCode(rs) != 1 {
		t.Errorf("exit code %d, want 1", ExitCode(rs))
	}
}

func ids(rs []Result) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = r.ID
	}
	return strings.Join(s, ",")
}

func TestRunSelectsAndReportsUnknown(t *testing.T) {
	rs := Run(context.Background(), &Env{}, []string{"sops-rules", "nope", "vip-link"}, nil)
	if got := ids(rs); got != "vip-link,sops-rules,nope" {
		t.Fatalf("got %s", got)
	}
	expect(t, rs[0], StatusSkip, "no talosconfig")
	expect(t, rs[1], StatusSkip, "no --repo")
	expect(t, rs[2], StatusError, `no check with id "nope"`, "vip-link, vip-claimed")
}

func TestRunAllOnEmptyEnvSkips(t *testing.T) {
	rs := Run(context.Background(), nil, nil, nil)
	if len(rs) != len(Checks()) {
		t.Fatalf("%d results for %d checks", len(rs), len(Checks()))
	}
	for _, r := range rs {
		if r.Status != StatusSkip {
			t.Errorf("%s: %s (%s), want skip on an empty env", r.ID, r.Status, r.Explanation)
		}
	}
	if ExitCode(rs) != 0 {
		t.Error("skips must not fail the run")
	}
}

func TestChecksRegistry(t *testing.T) {
	want := []string{"talos-endpoints", "vip-link", "vip-claimed", "etcd", "version-skew", "egress", "mtu", "lb-targets", "lb-owners", "lb-pending", "api-budget", "images", "kubeconfig-reachable", "provider-id", "nodes-ready", "image-pulls", "addons",
		"cilium-talos", "metadata-policy", "dns-ipv6", "external-dns-owner", "helmfile-v1", "sops-rules"}
	got := Checks()
	if len(got) != len(want) {
		t.Fatalf("%d checks, want %d", len(got), len(want))
	}
	for i, c := range got {
		if c.ID != want[i] || c.Title == "" || c.Run == nil || c.Timeout <= 0 {
			t.Errorf("check %d: %+v", i, c)
		}
	}
}

func TestExitCode(t *testing.T) {
	cases := []struct {
		st   []Status
		want int
	}{{nil, 0}, {[]Status{StatusPass, StatusWarn, StatusSkip}, 0}, {[]Status{StatusPass, StatusFail}, 1}, {[]Status{StatusError}, 1}}
	for _, c := range cases {
		var rs []Result
		for _, s := range c.st {
			rs = append(rs, Result{Status: s})
		}
		if got := ExitCode(rs); got != c.want {
			t.Errorf("%v: %d, want %d", c.st, got, c.want)
		}
	}
}

func TestWriteJSONAndText(t *testing.T) {
	rs := []Result{
		{ID: "vip-link", Title: "VIP", Status: StatusFail, Evidence: []string{"cp-1: link \"enp7s0\" does not exist"}, Explanation: "ignored", Fix: "use eth1"},
		{ID: "etcd", Title: "etcd", Status: StatusPass},
	}
	var b bytes.Buffer
	if err := WriteJSON(&b, rs, JSONOptions{Notes: []string{"no kubeconfig"}}); err != nil {
		t.Fatal(err)
	}
	var rep JSONReport
	if err := json.Unmarshal(b.Bytes(), &rep); err != nil {
		t.Fatalf("not one JSON document: %v\n%s", err, b.String())
	}
	if rep.SchemaVersion != 1 || rep.ExitCode != 1 || len(rep.Notes) != 1 || len(rep.Checks) != 2 {
		t.Errorf("report = %+v", rep)
	}
	if rep.Summary != (JSONSummary{Total: 2, Pass: 1, Fail: 1}) {
		t.Errorf("summary = %+v", rep.Summary)
	}
	var doc map[string]any
	json.Unmarshal(b.Bytes(), &doc)
	got := doc["checks"].([]any)[1].(map[string]any)
	for _, k := range []string{"id", "title", "status", "evidence", "explanation", "fix", "duration_ms"} {
		if _, ok := got[k]; !ok {
			t.Errorf("check lacks %q: %v", k, got)
		}
	}
	if ev, ok := got["evidence"].([]any); !ok || len(ev) != 0 {
		t.Errorf("evidence of a pass must be an empty list: %v", got)
	}
	if first := rep.Checks[0]; first.Status != StatusFail || !strings.Contains(first.Evidence[0], "enp7s0") {
		t.Errorf("first check: %+v", first)
	}

	b.Reset()
	if err := WriteText(&b, rs); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"FAIL  vip-link", "- cp-1: link \"enp7s0\" does not exist", "why: ignored", "fix: use eth1", "PASS  etcd", "2 checks: 1 pass, 0 warn, 1 fail, 0 error, 0 skip"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
}
