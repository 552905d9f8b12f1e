package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/talos"
)

func TestErrorsAndJSONAreRedacted(t *testing.T) {
	ipEcho(t)
	dir := seedDir(t)
	token := "tok" + strings.Repeat("Q", 61)
	t.Setenv("HCLOUD_TOKEN", token)
	t.Setenv("HCLOUD_ENDPOINT", echoingHetzner(t))
	cfg := filepath.Join(dir, "ohmytalos.yaml")
	for _, args := range [][]string{
		{"plan", "--config", cfg},
		{"plan", "--json", "--config", cfg},
		{"destroy", "--yes", "--config", cfg},
		{"cost", "--json", "--config", cfg},
	} {
		out, err := run(t, args...)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if strings.Contains(out+msg, strings.Repeat("Q", 61)) {
			t.Errorf("%s: the token reached the output or error:\nerror: %s\n%s", strings.Join(args, " "), msg, out)
		}
		if !strings.Contains(out+msg, "upstream refused") {
			t.Errorf("%s: the forced error never surfaced, so the test proves nothing:\nerror: %s\n%s", strings.Join(args, " "), msg, out)
		}
	}
}

// TestStoredKeysAreRedacted runs kubeconfig (which decrypts the stored
// kubeconfig) and then checks that an error carrying its client key or a
// key of the bundle, in any of the forms they travel in, comes out of the
// command's redaction with no key material.
func TestStoredKeysAreRedacted(t *testing.T) {
	dir, cfg := seedConfig(t)
	sdir := filepath.Join(dir, "st")
	bundle, err := talos.NewBundle("v1.13.9")
	if err != nil {
		t.Fatal(err)
	}
	_, bundleKeys, err := talos.BundleSecrets(bundle)
	if err != nil || len(bundleKeys) != 5 {
		t.Fatalf("bundle keys %d: %v", len(bundleKeys), err)
	}
	clientKey := base64.StdEncoding.EncodeToString([]byte(bundleKeys[0]))
	storeSecrets(t, sdir, map[string][]byte{"kubeconfig": adminKubeconfig(clientKey), "talos-secrets": bundle})
	root, g := newRoot()
	root.SetOut(&bytes.Buffer{})
	root.SetErr(&bytes.Buffer{})
	root.SetArgs([]string{"kubeconfig", "--config", cfg, "--state-dir", sdir, "--out", filepath.Join(dir, "kc")})
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	pem := bundleKeys[0]
	line := strings.Split(pem, "\n")[1]
	for what, leak := range map[string]string{
		"client-key-data": clientKey, "PEM key": pem, "one line of the key": line,
		"JSON-quoted key": strings.ReplaceAll(pem, "\n", `\n`),
	} {
		got := g.redactErr(fmt.Errorf("merge failed near %q: %s", "x", leak)).Error()
		if strings.Contains(got, line) {
			t.Errorf("%s not redacted: %s", what, got)
		}
	}
	// The bundle's keys are known once a command reads the bundle.
	g.observeSecret("talos-secrets", bundle)
	for i, k := range bundleKeys {
		b64 := base64.StdEncoding.EncodeToString([]byte(k))
		if got := g.redactErr(fmt.Errorf("config: %s", b64)).Error(); strings.Contains(got, b64[:60]) {
			t.Errorf("bundle key %d not redacted: %s", i, got)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "kc")); err != nil {
		t.Errorf("kubeconfig not written: %v", err)
	}
}
