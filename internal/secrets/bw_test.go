package secrets_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/secrets"
)

// installFakeBW puts testdata/fakebw.sh first on PATH as "bw" and returns the
// file that logs its command lines.
func installFakeBW(t *testing.T, status string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fake bw is a shell script")
	}
	script, err := os.ReadFile(filepath.Join("testdata", "fakebw.sh"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bw"), script, 0o755); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "calls.log")
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("FAKEBW_STATUS", status)
	t.Setenv("FAKEBW_LOG", log)
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
		{name: "unauthenticated", status: "unauthenticated", ref: secrets.Ref{Provider: "bw", Ref: "item-1"},
			wantErr: []string{"bw is not logged in", `"bw config server URL"`, `"bw login --apikey"`}},
		{name: "locked", status: "locked", ref: secrets.Ref{Provider: "bw", Ref: "item-1"},
			wantErr: []string{"bw is locked", `"bw unlock"`, "BW_SESSION"}},
		{name: "locked with session", status: "locked", session: "good-session",
			ref: secrets.Ref{Provider: "bw", Ref: "item-1"}, want: "hunter2-s3cret"},
		{name: "unlocked password", status: "unlocked", ref: secrets.Ref{Provider: "bw", Ref: "item-1"}, want: "hunter2-s3cret"},
		{name: "wrong id", status: "unlocked", ref: secrets.Ref{Provider: "bw", Ref: "item-404"},
			wantErr: []string{`"item-404"`, "Not found."}},
		{name: "custom field", status: "unlocked", ref: secrets.Ref{Provider: "bw", Ref: "item-1", Field: "token"}, want: "field-s3cret"},
		{name: "username", status: "unlocked", ref: secrets.Ref{Provider: "bw", Ref: "item-1", Field: "username"}, want: "ops-user"},
		{name: "missing field", status: "unlocked", ref: secrets.Ref{Provider: "bw", Ref: "item-1", Field: "nope"},
			wantErr: []string{`no field "nope"`, "token, region"}},
		{name: "field of wrong id", status: "unlocked", ref: secrets.Ref{Provider: "bw", Ref: "item-404", Field: "token"},
			wantErr: []string{`"item-404"`, "Not found."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := installFakeBW(t, tc.status)
			env := map[string]string{}
			if tc.session != "" {
				env["BW_SESSION"] = tc.session
			}
			r := secrets.NewResolver(secrets.Options{Env: envMap(env)})
			v, err := r.Lookup(ctx, tc.ref)
			if tc.wantErr != nil {
				if err == nil {
					t.Fatalf("Lookup succeeded, want an error")
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not mention %q", err, w)
					}
				}
				for _, s := range []string{"hunter2-s3cret", "field-s3cret", "note-s3cret"} {
					if strings.Contains(err.Error(), s) {
						t.Errorf("error leaks a secret: %q", err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if v.Reveal() != tc.want {
				t.Fatalf("Reveal() = %q, want %q", v.Reveal(), tc.want)
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

func TestBWMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	r := secrets.NewResolver(secrets.Options{Env: envMap(nil)})
	_, err := r.Lookup(context.Background(), secrets.Ref{Provider: "bw", Ref: "item-1"})
	if err == nil || !strings.Contains(err.Error(), `"bw" was not found`) || !strings.Contains(err.Error(), "install") {
		t.Fatalf("err = %v, want a clear bw-not-found error", err)
	}
}

// fakeServe mimics the bw serve Vault Management API.
func fakeServe(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/object/password/item-1":
			_, _ = w.Write([]byte(`{"success":true,"data":{"object":"string","data":"serve-s3cret"}}`))
		case "/object/item/item-1":
			_, _ = w.Write([]byte(`{"success":true,"data":{"object":"item","id":"item-1","login":{"username":"ops-user","password":"serve-s3cret"},` +
				`"fields":[{"name":"token","value":"serve-field-s3cret","type":1}]}}`))
		case "/object/password/locked":
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"success":false,"message":"Vault is locked."}`))
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"success":false,"message":"Not found."}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestBWServe(t *testing.T) {
	t.Parallel()
	srv := fakeServe(t)
	ctx := context.Background()
	viaOptions := secrets.NewResolver(secrets.Options{Env: envMap(nil), BWServeURL: srv.URL, BWPath: "bw-must-not-run", HTTPClient: srv.Client()})
	viaRef := secrets.NewResolver(secrets.Options{Env: envMap(nil), BWPath: "bw-must-not-run", HTTPClient: srv.Client()})

	for _, tc := range []struct {
		name    string
		r       *secrets.Resolver
		ref     secrets.Ref
		want    string
		wantErr []string
	}{
		{"password via options", viaOptions, secrets.Ref{Provider: "bw", Ref: "item-1"}, "serve-s3cret", nil},
		{"password via ref", viaRef, secrets.Ref{Provider: "bw", Ref: "item-1", ServerURL: srv.URL + "/"}, "serve-s3cret", nil},
		{"field", viaOptions, secrets.Ref{Provider: "bw", Ref: "item-1", Field: "token"}, "serve-field-s3cret", nil},
		{"login username", viaOptions, secrets.Ref{Provider: "bw", Ref: "item-1", Field: "username"}, "ops-user", nil},
		{"not found", viaOptions, secrets.Ref{Provider: "bw", Ref: "item-404"}, "", []string{`"item-404"`, "Not found."}},
		{"locked", viaOptions, secrets.Ref{Provider: "bw", Ref: "locked"}, "", []string{"Vault is locked."}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v, err := tc.r.Lookup(ctx, tc.ref)
			if tc.wantErr != nil {
				if err == nil {
					t.Fatal("Lookup succeeded, want an error")
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not mention %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if v.Reveal() != tc.want {
				t.Fatalf("Reveal() = %q, want %q", v.Reveal(), tc.want)
			}
		})
	}
}

func TestBWServeUnreachable(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	r := secrets.NewResolver(secrets.Options{Env: envMap(nil), BWServeURL: url})
	_, err := r.Lookup(context.Background(), secrets.Ref{Provider: "bw", Ref: "item-1"})
	if err == nil || !strings.Contains(err.Error(), "unreachable") || !strings.Contains(err.Error(), "bw serve") || !strings.Contains(err.Error(), url) {
		t.Fatalf("err = %v, want an unreachable bw serve error naming %s", err, url)
	}
}
