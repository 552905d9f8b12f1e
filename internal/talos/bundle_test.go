package talos

import (
	"bytes"
	"strings"
	"testing"
)

func TestBundleRoundTrip(t *testing.T) {
	data, err := testBundleBytes()
	if err != nil {
		t.Fatal(err)
	}

	b, err := LoadBundle(data)
	if err != nil {
		t.Fatal(err)
	}

	if err := b.Validate(); err != nil {
		t.Fatalf("loaded bundle is invalid: %v", err)
	}

	if b.Clock == nil {
		t.Fatal("loaded bundle has no clock")
	}

	// Talos >= 1.7 uses secretbox, not aescbc, for Kubernetes secrets at rest.
	if b.Secrets.SecretboxEncryptionSecret == "" || b.Secrets.AESCBCEncryptionSecret != "" {
		t.Errorf("want a secretbox secret only, got secretbox=%t aescbc=%t",
			b.Secrets.SecretboxEncryptionSecret != "", b.Secrets.AESCBCEncryptionSecret != "")
	}

	// The bytes are in talosctl's secrets.yaml layout.
	for _, key := range []string{"cluster:", "secrets:", "trustdinfo:", "certs:", "bootstraptoken:"} {
		if !bytes.Contains(data, []byte(key)) {
			t.Errorf("bundle YAML lacks %q", key)
		}
	}

	// Loading twice gives the same secrets.
	b2, err := LoadBundle(data)
	if err != nil {
		t.Fatal(err)
	}

	if b2.Cluster.Secret != b.Cluster.Secret || !bytes.Equal(b2.Certs.OS.Key, b.Certs.OS.Key) {
		t.Error("two loads of the same bytes differ")
	}
}

func TestNewBundleRejectsVersions(t *testing.T) {
	for _, v := range []string{"", "latest", "v1.11.5"} {
		if _, err := NewBundle(v); err == nil {
			t.Errorf("NewBundle(%q): want an error", v)
		}
	}
}

func TestLoadBundleErrors(t *testing.T) {
	data, err := testBundleBytes()
	if err != nil {
		t.Fatal(err)
	}

	// Drop the certs section: the bundle is incomplete.
	idx := bytes.Index(data, []byte("certs:"))
	if idx < 0 {
		t.Fatal("no certs section")
	}

	cases := map[string][]byte{
		"empty":      nil,
		"not yaml":   []byte("\x00\x01 not: [yaml"),
		"unknown":    []byte("cluster:\n  id: x\nsurprise: 1\n"),
		"incomplete": data[:idx],
	}

	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := LoadBundle(in)
			if err == nil {
				t.Fatal("want an error")
			}

			if !strings.HasPrefix(err.Error(), "load talos secrets bundle") {
				t.Errorf("error does not say what failed: %v", err)
			}
		})
	}
}
