package factoryfake_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/factory"
	"github.com/ohmytalos/ohmytalos/internal/sandbox/factoryfake"
)

func newServer(t *testing.T) (*factoryfake.Fake, *httptest.Server) {
	t.Helper()
	f := factoryfake.New()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func TestClientAgainstFake(t *testing.T) {
	t.Parallel()
	f, srv := newServer(t)
	ctx := context.Background()
	c := factory.NewClient(srv.URL, srv.Client())

	s := factory.New([]string{"siderolabs/iscsi-tools", "siderolabs/util-linux-tools"}, nil)
	want, _ := s.ID()
	id, err := c.Register(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if id != want {
		t.Fatalf("Register = %s, want %s", id, want)
	}
	stored, ok := f.Schematic(id)
	canonical, _ := s.Marshal()
	if !ok || !bytes.Equal(stored, canonical) {
		t.Fatalf("fake stored %q, want %q", stored, canonical)
	}

	versions, err := c.Versions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(versions, "v1.13.9") {
		t.Fatalf("versions %v lack v1.13.9", versions)
	}

	exts, err := c.OfficialExtensions(ctx, "v1.13.9")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range exts {
		names = append(names, e.Name)
		if e.Ref == "" || !strings.HasPrefix(e.Digest, "sha256:") || e.Author == "" || e.Description == "" {
			t.Errorf("extension %+v has empty fields", e)
		}
	}
	for _, n := range []string{"siderolabs/tailscale", "siderolabs/iscsi-tools", "siderolabs/util-linux-tools"} {
		if !slices.Contains(names, n) {
			t.Errorf("extensions lack %s: %v", n, names)
		}
	}
	if _, err := c.OfficialExtensions(ctx, "v0.0.1"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("unknown version: err = %v, want a 404", err)
	}
	if f.Requests() != 4 {
		t.Errorf("Requests() = %d, want 4", f.Requests())
	}
}

func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url) //nolint:noctx // loopback test server
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

func TestSchematicsEndpoint(t *testing.T) {
	t.Parallel()
	_, srv := newServer(t)

	// JSON body, parsed exactly like factory.Parse.
	resp, err := http.Post(srv.URL+"/schematics", "application/json",
		strings.NewReader(`{"customization": {"extraKernelArgs": ["noapic", "nolapic"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	const want = "9cba8e32753f91a16c1837ab8abf356af021706ef284aef07380780177d9a06c"
	if resp.StatusCode != http.StatusCreated || !strings.Contains(string(body), want) {
		t.Fatalf("POST /schematics = %d %s, want 201 with %s", resp.StatusCode, body, want)
	}

	code, yml := get(t, srv.URL+"/schematics/"+want)
	if code != http.StatusOK || string(yml) != "customization:\n    extraKernelArgs:\n        - noapic\n        - nolapic\n" {
		t.Fatalf("GET schematic = %d %q", code, yml)
	}

	resp, err = http.Post(srv.URL+"/schematics", "application/yaml", strings.NewReader("customization:\n  bogus: 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("invalid schematic: status %d, want 400", resp.StatusCode)
	}

	if code, _ := get(t, srv.URL+"/schematics/"+strings.Repeat("ab", 32)); code != http.StatusNotFound {
		t.Fatalf("unknown schematic: status %d, want 404", code)
	}
}

func TestDiskImageIsValidXZ(t *testing.T) {
	t.Parallel()
	_, srv := newServer(t)
	id := factory.EmptySchematicID

	code, body := get(t, factory.DiskImageURL(srv.URL, id, "v1.13.9", "arm64"))
	if code != http.StatusOK {
		t.Fatalf("image status %d: %s", code, body)
	}
	if !bytes.HasPrefix(body, []byte{0xFD, '7', 'z', 'X', 'Z', 0x00}) {
		t.Fatal("image is not an xz stream")
	}
	xz, err := exec.LookPath("xz")
	if err != nil {
		t.Skip("xz not installed: cannot decode the image here")
	}
	cmd := exec.Command(xz, "-d", "-c")
	cmd.Stdin = bytes.NewReader(body)
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("xz -d rejected the image: %v", err)
	}
	if !bytes.Equal(raw, factoryfake.DiskImage(id, "v1.13.9", "arm64")) {
		t.Fatal("decoded image differs from DiskImage")
	}

	for _, p := range []string{
		"/image/" + strings.Repeat("ab", 32) + "/v1.13.9/hcloud-amd64.raw.xz", // unknown schematic
		"/image/" + id + "/v9.9.9/hcloud-amd64.raw.xz",                        // unknown version
		"/image/" + id + "/v1.13.9/hcloud-riscv64.raw.xz",                     // unknown arch
	} {
		if code, _ := get(t, srv.URL+p); code != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404", p, code)
		}
	}
}

func TestDiskHeaderRoundTrip(t *testing.T) {
	id := strings.Repeat("ab", 32)
	h, ok := factoryfake.ParseDiskHeader(factoryfake.DiskImage(id, "v1.13.9", "arm64"))
	if !ok || h != (factoryfake.DiskHeader{Schematic: id, Version: "v1.13.9", Arch: "arm64"}) {
		t.Fatalf("ParseDiskHeader(DiskImage) = %+v, %v", h, ok)
	}
	for _, other := range [][]byte{nil, make([]byte, 512), []byte("debian 12 root filesystem\n"),
		[]byte("ohmytalos sandbox talos disk image\nschematic=zz\nversion=v1\narch=amd64\n")} {
		if _, ok := factoryfake.ParseDiskHeader(other); ok {
			t.Errorf("ParseDiskHeader(%q) claims a Talos disk", other)
		}
	}
}
