package safeurl

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for raw, ok := range map[string]bool{
		"https://api.hetzner.cloud/v1": true, "http://127.0.0.1:8080/v1": true, "http://localhost:1": true,
		"http://[::1]:8087": true, "http://api.hetzner.cloud/v1": false, "http://10.0.0.5:8080": false,
		"ftp://example.com": false, "api.hetzner.cloud": false, "http://127.0.0.1.nip.io/": false,
	} {
		_, err := Check("HCLOUD_ENDPOINT", raw)
		if (err == nil) != ok {
			t.Errorf("%s: %v", raw, err)
		}
		if err != nil && (!strings.Contains(err.Error(), "HCLOUD_ENDPOINT") || !strings.Contains(err.Error(), "https")) {
			t.Errorf("%s: error names neither the variable nor the fix: %v", raw, err)
		}
	}
}
