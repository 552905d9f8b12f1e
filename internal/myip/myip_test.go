package myip

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

func echo(body string, code int) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(code)
		_, _ = w.Write([]byte(body))
	}))
}

func TestDetect(t *testing.T) {
	v4 := echo("203.0.113.7\n", 200)
	defer v4.Close()
	v6 := echo("2001:db8:1:2:3:4:5:6", 200)
	defer v6.Close()
	bad := echo("<html>", 200)
	defer bad.Close()
	down := echo("", 503)
	defer down.Close()
	tests := []struct {
		name    string
		urls    []string
		want    []string
		wantErr string
	}{
		{"both families", []string{v4.URL, v6.URL}, []string{"203.0.113.7/32", "2001:db8:1:2::/64"}, ""},
		{"v6 service down is fine", []string{v4.URL, down.URL}, []string{"203.0.113.7/32"}, ""},
		{"first answer per family wins", []string{v4.URL, v4.URL}, []string{"203.0.113.7/32"}, ""},
		{"nothing found names the url and the key", []string{bad.URL, down.URL}, nil, "firewall.allow"},
		{"unreachable", []string{"http://127.0.0.1:1/"}, nil, "127.0.0.1:1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Detect(context.Background(), nil, tc.urls)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to mention %q", err, tc.wantErr)
				}
				if !strings.Contains(err.Error(), tc.urls[0]) {
					t.Errorf("err %v does not name %s", err, tc.urls[0])
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Sources(), tc.want) {
				t.Errorf("sources = %v, want %v", got.Sources(), tc.want)
			}
		})
	}
}

func TestMappedV4IsV4(t *testing.T) {
	s := echo("::ffff:198.51.100.9", 200)
	defer s.Close()
	got, err := Detect(context.Background(), nil, []string{s.URL})
	if err != nil {
		t.Fatal(err)
	}
	if got.IPv4 != netip.MustParseAddr("198.51.100.9") {
		t.Errorf("IPv4 = %v", got.IPv4)
	}
}

func TestURLs(t *testing.T) {
	tests := []struct {
		spec, env string
		want      []string
	}{
		{"", "", DefaultURLs()},
		{"", "http://a/ip", []string{"http://a/ip"}},
		{"https://s/", "http://a/ip", []string{"https://s/"}},
		{" , ", "http://a, http://b ", []string{"http://a", "http://b"}},
	}
	for _, tc := range tests {
		if got := URLs(tc.spec, tc.env); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("URLs(%q, %q) = %v, want %v", tc.spec, tc.env, got, tc.want)
		}
	}
}

func TestDetectRefusesPlainHTTPToAnotherHost(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("203.0.113.7")) }))
	defer srv.Close()
	// A loopback echo over http answers; one on another machine over
	// http is refused before anything is asked, even beside a good one.
	if _, err := Detect(context.Background(), srv.Client(), []string{srv.URL}); err != nil {
		t.Fatalf("loopback http: %v", err)
	}
	_, err := Detect(context.Background(), srv.Client(), []string{srv.URL, "http://192.0.2.1/ip"})
	if err == nil || !strings.Contains(err.Error(), SpecKey) || !strings.Contains(err.Error(), URLEnv) || !strings.Contains(err.Error(), "use https") {
		t.Fatalf("err = %v, want a refusal naming %s, %s and https", err, SpecKey, URLEnv)
	}
}
