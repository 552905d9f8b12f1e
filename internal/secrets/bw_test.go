package secrets_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/bwfake"
	"github.com/ohmytalos/ohmytalos/internal/secrets"
)

// installFakeBW puts a wrapper first on PATH as "bw" that runs
// testdata/fakebw.sh with its settings built in (bw gets a minimal
// environment, so they cannot travel as variables), and returns the file
// that logs its command lines.
func installFakeBW(t *testing.T, status string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fake bw is a shell script")
	}
	script, err := filepath.Abs(filepath.Join("testdata", "fakebw.sh"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "calls.log")
	wrapper := fmt.Sprintf("#!/bin/sh\nFAKEBW_STATUS=%s FAKEBW_LOG=%s exec /bin/sh %s \"$@\"\n", status, log, script)
	if err := os.WriteFile(filepath.Join(dir, "bw"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("BW_SESSION", "")
	return log
}

// envMap returns an Options.Env backed by a map.
func envMap(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

func TestBWCLI(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, status, session string
		ref                   secrets.Ref
		want                  string
		wantErr               []string
	}{
		{name: "unauthenticated", status: "unauthenticated", ref: secrets.Ref{Provider: "bw", Ref: itemID},
			wantErr: []string{"bw is not logged in", `"bw config server URL"`, `"bw login --apikey"`}},
		{name: "locked", status: "locked", ref: secrets.Ref{Provider: "bw", Ref: itemID},
			wantErr: []string{"bw is locked", `"bw unlock"`, "BW_SESSION"}},
		{name: "locked with session", status: "locked", session: "good-session",
			ref: secrets.Ref{Provider: "bw", Ref: itemID}, want: "hunter2-s3cret"},
		{name: "unlocked password", status: "unlocked", ref: secrets.Ref{Provider: "bw", Ref: itemID}, want: "hunter2-s3cret"},
		{name: "wrong id", status: "unlocked", ref: secrets.Ref{Provider: "bw", Ref: missingID},
			wantErr: []string{missingID, "Not found."}},
		{name: "custom field", status: "unlocked", ref: secrets.Ref{Provider: "bw", Ref: itemID, Field: "token"}, want: "field-s3cret"},
		{name: "username", status: "unlocked", ref: secrets.Ref{Provider: "bw", Ref: itemID, Field: "username"}, want: "ops-user"},
		{name: "missing field", status: "unlocked", ref: secrets.Ref{Provider: "bw", Ref: itemID, Field: "nope"},
			wantErr: []string{`no field "nope"`, "token, region"}},
		{name: "field of wrong id", status: "unlocked", ref: secrets.Ref{Provider: "bw", Ref: missingID, Field: "token"},
			wantErr: []string{missingID, "Not found."}},
		{name: "exact name among search hits", status: "unlocked", ref: secrets.Ref{Provider: "bw", Ref: "hcloud"}, want: "hunter2-s3cret"},
		{name: "exact name, custom field", status: "unlocked", ref: secrets.Ref{Provider: "bw", Ref: "hcloud", Field: "token"}, want: "field-s3cret"},
		{name: "name matched only as part of another", status: "unlocked", ref: secrets.Ref{Provider: "bw", Ref: "hcl"},
			wantErr: []string{`no item is named exactly "hcl"`, "bw list items --search"}},
		{name: "ambiguous name", status: "unlocked", ref: secrets.Ref{Provider: "bw", Ref: "shared"},
			wantErr: []string{`2 items are named "shared"`, "2d3e4f50-6172-4c8d-9eaf-1a2b3c4d5e6f, 3e4f5061-7283-4d9e-afb0-2b3c4d5e6f70", "set ref to the ID"}},
		{name: "flag-like reference", status: "unlocked", ref: secrets.Ref{Provider: "bw", Ref: "--session=x"},
			wantErr: []string{"starts with '-'", "would be read as an option"}},
		{name: "control character", status: "unlocked", ref: secrets.Ref{Provider: "bw", Ref: "hcloud\n--raw"},
			wantErr: []string{"control character"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := installFakeBW(t, tc.status)
			env := map[string]string{}
			if tc.session != "" {
				env["BW_SESSION"] = tc.session
			}
			r := secrets.NewResolver(secrets.Options{Env: envMap(env)})
			v, err := r.Lookup(ctx, tc.ref)
			if !checkLookup(t, v, err, tc.want, tc.wantErr, "hunter2-s3cret", "field-s3cret", "note-s3cret", "shared-one", "shared-two") {
				return
			}
			calls, err := os.ReadFile(log)
			if err != nil {
				t.Fatal(err)
			}
			if tc.session != "" && strings.Contains(string(calls), tc.session) {
				t.Errorf("BW_SESSION appeared on a bw command line: %q", calls)
			}
			if !strings.Contains(string(calls), "--nointeraction") {
				t.Errorf("bw ran without --nointeraction: %q", calls)
			}
		})
	}
}

// checkLookup checks what Lookup returned: with wantErr set, an error
// that names each of wantErr and none of leaks; else no error and the
// value want. It reports whether the lookup succeeded as wanted.
func checkLookup(t *testing.T, v secrets.Value, err error, want string, wantErr []string, leaks ...string) bool {
	t.Helper()
	if wantErr != nil {
		if err == nil {
			t.Fatal("Lookup succeeded, want an error")
		}
		for _, w := range wantErr {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q does not mention %q", err, w)
			}
		}
		for _, s := range leaks {
			if strings.Contains(err.Error(), s) {
				t.Errorf("error leaks a secret: %q", err)
			}
		}
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	if v.Reveal() != want {
		t.Fatalf("Reveal() = %q, want %q", v.Reveal(), want)
	}
	return true
}

// The ID of the fake's "hcloud" item, and an ID no item has.
const (
	itemID    = "0b1d2c3e-4f50-4a6b-8c7d-9e0f1a2b3c4d"
	missingID = "ffffffff-ffff-4fff-bfff-ffffffffffff"
)

// bw runs with the session and the variables it needs, nothing else; IDs
// come after "--".
func TestBWCLIEnvironmentAndArguments(t *testing.T) {
	log := installFakeBW(t, "locked")
	t.Setenv("HCLOUD_TOKEN", "hcloud-must-not-leak")
	t.Setenv("BWS_ACCESS_TOKEN", "bws-must-not-leak")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "aws-must-not-leak")
	t.Setenv("HTTPS_PROXY", "http://proxy.example:3128")
	r := secrets.NewResolver(secrets.Options{Env: envMap(map[string]string{"BW_SESSION": "good-session"})})
	if _, err := r.Lookup(context.Background(), secrets.Ref{Provider: "bw", Ref: itemID}); err != nil {
		t.Fatal(err)
	}
	env, err := os.ReadFile(log + ".env")
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"hcloud-must-not-leak", "bws-must-not-leak", "aws-must-not-leak"} {
		if strings.Contains(string(env), leak) {
			t.Errorf("bw's environment holds %s:\n%s", leak, env)
		}
	}
	for _, want := range []string{"BW_SESSION=good-session", "PATH=", "HTTPS_PROXY=http://proxy.example:3128"} {
		if !strings.Contains(string(env), want) {
			t.Errorf("bw's environment lacks %s:\n%s", want, env)
		}
	}
	calls, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if want := "get password --nointeraction -- " + itemID; !strings.Contains(string(calls), want) {
		t.Errorf("calls %q; want %q", calls, want)
	}
}

// A bw that waits for input is stopped, with a message that says so.
func TestBWCLITimeout(t *testing.T) {
	installFakeBW(t, "hang")
	r := secrets.NewResolver(secrets.Options{Env: envMap(nil), BWTimeout: 300 * time.Millisecond})
	start := time.Now()
	_, err := r.Lookup(context.Background(), secrets.Ref{Provider: "bw", Ref: itemID})
	if err == nil {
		t.Fatal("Lookup succeeded, want a timeout")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Lookup took %s; the timeout is 300ms", d)
	}
	for _, w := range []string{"bw status timed out after 300ms", "waiting for input", `"bw unlock"`, "BW_SESSION"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
}

func TestBWMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	r := secrets.NewResolver(secrets.Options{Env: envMap(nil)})
	_, err := r.Lookup(context.Background(), secrets.Ref{Provider: "bw", Ref: itemID})
	if err == nil || !strings.Contains(err.Error(), `"bw" was not found`) || !strings.Contains(err.Error(), "install") {
		t.Fatalf("err = %v, want a clear bw-not-found error", err)
	}
}

// serveItemID is the ID of the bw serve fake's "hcloud" item.
const serveItemID = "4f506172-8394-4eaf-b0c1-3c4d5e6f7081"

// fakeServe runs the sandbox's bw serve fake with a few items.
func fakeServe(t *testing.T, locked bool) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(bwfake.New(bwfake.Options{Locked: locked, MasterPassword: "pw", Items: []bwfake.Item{
		{ID: serveItemID, Name: "hcloud", Username: "ops-user", Password: "serve-s3cret",
			Fields: []bwfake.Field{{Name: "token", Value: "serve-field-s3cret", Type: 1}}},
		{ID: "50617283-94af-4b0c-84d5-e6f708192a3b", Name: "hcloud-staging", Password: "staging-s3cret"},
		{ID: "60718293-a4b0-4c1d-8e6f-708192a3b4c5", Name: "shared", Password: "shared-one"},
		{ID: "718293a4-b5c1-4d2e-9f70-8192a3b4c5d6", Name: "shared", Password: "shared-two"},
	}}))
	t.Cleanup(srv.Close)
	return srv
}

func TestBWServe(t *testing.T) {
	t.Parallel()
	srv := fakeServe(t, false)
	locked := fakeServe(t, true)
	ctx := context.Background()
	viaOptions := secrets.NewResolver(secrets.Options{Env: envMap(nil), BWServeURL: srv.URL, BWPath: "bw-must-not-run", HTTPClient: srv.Client()})
	viaRef := secrets.NewResolver(secrets.Options{Env: envMap(nil), BWPath: "bw-must-not-run", HTTPClient: srv.Client()})
	missing := "ffffffff-ffff-4fff-bfff-ffffffffffff"

	for _, tc := range []struct {
		name    string
		r       *secrets.Resolver
		ref     secrets.Ref
		want    string
		wantErr []string
	}{
		{"password via options", viaOptions, secrets.Ref{Provider: "bw", Ref: serveItemID}, "serve-s3cret", nil},
		{"password via ref", viaRef, secrets.Ref{Provider: "bw", Ref: serveItemID, ServerURL: srv.URL + "/"}, "serve-s3cret", nil},
		{"field", viaOptions, secrets.Ref{Provider: "bw", Ref: serveItemID, Field: "token"}, "serve-field-s3cret", nil},
		{"login username", viaOptions, secrets.Ref{Provider: "bw", Ref: serveItemID, Field: "username"}, "ops-user", nil},
		{"exact name", viaOptions, secrets.Ref{Provider: "bw", Ref: "hcloud"}, "serve-s3cret", nil},
		{"exact name, field", viaOptions, secrets.Ref{Provider: "bw", Ref: "hcloud", Field: "token"}, "serve-field-s3cret", nil},
		{"ambiguous name", viaOptions, secrets.Ref{Provider: "bw", Ref: "shared"}, "",
			[]string{`2 items are named "shared"`, "60718293-a4b0-4c1d-8e6f-708192a3b4c5, 718293a4-b5c1-4d2e-9f70-8192a3b4c5d6"}},
		{"no exact name", viaOptions, secrets.Ref{Provider: "bw", Ref: "hcl"}, "", []string{`no item is named exactly "hcl"`}},
		{"not found", viaOptions, secrets.Ref{Provider: "bw", Ref: missing}, "", []string{missing, "Not found."}},
		{"locked", viaRef, secrets.Ref{Provider: "bw", Ref: serveItemID, ServerURL: locked.URL}, "", []string{"Vault is locked.", "/unlock"}},
		{"flag-like", viaOptions, secrets.Ref{Provider: "bw", Ref: "-x"}, "", []string{"starts with '-'"}},
		{"plain http off this machine", viaRef, secrets.Ref{Provider: "bw", Ref: serveItemID, ServerURL: "http://vault.example.org:8087"}, "",
			[]string{"neither on this machine nor https", "bw serve --hostname localhost"}},
		{"not a URL", viaRef, secrets.Ref{Provider: "bw", Ref: serveItemID, ServerURL: "localhost:8087"}, "", []string{"is not a URL"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v, err := tc.r.Lookup(ctx, tc.ref)
			checkLookup(t, v, err, tc.want, tc.wantErr, "serve-s3cret", "shared-one", "shared-two")
		})
	}
}

func TestServeURLPolicy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"http://localhost:8087", true},
		{"http://127.0.0.1:8087", true},
		{"http://127.9.9.9:8087", true},
		{"http://[::1]:8087", true},
		{"https://vault.example.org/bw", true},
		{"http://vault.example.org:8087", false},
		{"http://10.0.0.5:8087", false},
		{"ftp://localhost/x", false},
	} {
		// No request leaves the machine: the transport refuses to dial.
		offline := &http.Client{Transport: &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) {
			return nil, errors.New("offline test")
		}}}
		r := secrets.NewResolver(secrets.Options{Env: envMap(nil), HTTPClient: offline})
		_, err := r.Lookup(context.Background(), secrets.Ref{Provider: "bw", Ref: serveItemID, ServerURL: tc.url})
		refused := err != nil && strings.Contains(err.Error(), "neither on this machine nor https")
		if refused == tc.ok {
			t.Errorf("%s: refused = %v, want %v (%v)", tc.url, refused, !tc.ok, err)
		}
	}
}

func TestBWServeUnreachable(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	r := secrets.NewResolver(secrets.Options{Env: envMap(nil), BWServeURL: url})
	_, err := r.Lookup(context.Background(), secrets.Ref{Provider: "bw", Ref: serveItemID})
	if err == nil || !strings.Contains(err.Error(), "unreachable") || !strings.Contains(err.Error(), "bw serve") || !strings.Contains(err.Error(), url) {
		t.Fatalf("err = %v, want an unreachable bw serve error naming %s", err, url)
	}
}
