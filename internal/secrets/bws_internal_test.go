package secrets

import (
	"strings"
	"testing"
)

func TestBWSEndpoints(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		server, api, identity string
	}{
		{"", "", ""},
		{"https://vault.bitwarden.com", "", ""},
		{"https://vault.bitwarden.eu/", "https://api.bitwarden.eu", "https://identity.bitwarden.eu"},
		{"https://vw.example.org", "https://vw.example.org/api", "https://vw.example.org/identity"},
		{"http://127.0.0.1:8080/bw/", "http://127.0.0.1:8080/bw/api", "http://127.0.0.1:8080/bw/identity"},
	} {
		api, identity, err := bwsEndpoints(tc.server)
		if err != nil {
			t.Fatalf("%q: %v", tc.server, err)
		}
		if deref(api) != tc.api || deref(identity) != tc.identity {
			t.Errorf("%q: got %q %q, want %q %q", tc.server, deref(api), deref(identity), tc.api, tc.identity)
		}
	}
	for _, bad := range []string{"vault.example.org", "ftp://x", "https://", "http://vw.example.org", "http://10.0.0.2:8080"} {
		if _, _, err := bwsEndpoints(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, _, err := bwsEndpoints("http://vw.example.org"); err == nil || !strings.Contains(err.Error(), "serverURL") || !strings.Contains(err.Error(), "use https") {
		t.Errorf("plain http to another host: %v", err)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func TestValidateAccessTokenAcceptsRealShape(t *testing.T) {
	t.Parallel()
	if err := validateAccessToken("0.ec2c1d46-6a4b-4751-a310-af9601317f2d.C2IgxjjLF7qSshsbwe8JGcbM075YXw:X8vbvA0bduihIDe/qrzIQQ=="); err != nil {
		t.Fatal(err)
	}
	// Unpadded key, as the SDK's indifferent base64 engine accepts it.
	if err := validateAccessToken("0.ec2c1d46-6a4b-4751-a310-af9601317f2d.secret:X8vbvA0bduihIDe/qrzIQQ"); err != nil {
		t.Fatal(err)
	}
}
