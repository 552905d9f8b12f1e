package imaging

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/factoryfake"
)

func TestLabelsFitHetznerLimits(t *testing.T) {
	k := Key{SchematicID: strings.Repeat("f", 64), TalosVersion: "v1.13.9", Arch: "arm64"}
	for name, v := range Labels(k) {
		if len(v) > maxLabelValue || len(strings.TrimPrefix(name, "ohmytalos.io/")) > maxLabelValue {
			t.Errorf("label %s=%q is longer than 63 characters", name, v)
		}
	}
	if got := Labels(k)[LabelSchematic]; got != strings.Repeat("f", 63) {
		t.Errorf("schematic label = %q", got)
	}
	if got := descriptionSchematic(Description(k)); got != k.SchematicID {
		t.Errorf("description round trip = %q", got)
	}
	if got := descriptionSchematic("some snapshot"); got != "" {
		t.Errorf("foreign description gave %q", got)
	}
	if a, b := buildKey(k), buildKey(Key{SchematicID: k.SchematicID, TalosVersion: "v1.13.9", Arch: "amd64"}); a == b || len(a) != 16 {
		t.Errorf("build keys %q %q", a, b)
	}
	for _, bad := range []Key{
		{SchematicID: "xyz", TalosVersion: "v1.13.9", Arch: "amd64"},
		{SchematicID: k.SchematicID, TalosVersion: "1.13", Arch: "amd64"},
		{SchematicID: k.SchematicID, TalosVersion: "v1.13.9", Arch: "riscv64"},
	} {
		if bad.validate() == nil {
			t.Errorf("key %+v accepted", bad)
		}
	}
}

func TestWriteCommandQuotes(t *testing.T) {
	got, err := writeCommand("https://factory.talos.dev/image/abc/v1.13.9/hcloud-amd64.raw.xz?x='1'")
	if err != nil {
		t.Fatal(err)
	}
	want := `set -o pipefail; wget -nv -O- 'https://factory.talos.dev/image/abc/v1.13.9/hcloud-amd64.raw.xz?x='\''1'\''' | xz -d | dd of=/dev/sda bs=4M conv=sparse status=progress`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	for _, bad := range []string{"", "ftp://x/y", "/image/x", "https://"} {
		if _, err := writeCommand(bad); err == nil {
			t.Errorf("writeCommand(%q) accepted", bad)
		}
	}
}

func TestProgressWriter(t *testing.T) {
	var got []int64
	p := &progressWriter{onBytes: func(n int64) { got = append(got, n) }}
	for _, chunk := range []string{
		"2026-01-01 URL:https://x [1/1] -> \"-\" [1]\n",
		"4194304 bytes (4.2 MB, 4.0 MiB) copied, 1 s, 4.2 MB/s\r8388",
		"608 bytes (8.4 MB, 8.0 MiB) copied, 2 s, 4.2 MB/s\r",
		"\n2+0 records in\n2+0 records out\n8388608 bytes (8.4 MB, 8.0 MiB) copied, 2.1 s, 4.0 MB/s\n",
		"dd: error writing '/dev/sda': No space left on device",
	} {
		if _, err := p.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	if len(got) != 3 || got[0] != 4194304 || got[1] != 8388608 || got[2] != 8388608 {
		t.Errorf("byte counts = %v", got)
	}
	tail := p.tail()
	if strings.Contains(tail, "records") || strings.Contains(tail, "copied") || !strings.HasSuffix(tail, "No space left on device") {
		t.Errorf("tail = %q", tail)
	}
}

func TestUncompressedSizeFromXZIndex(t *testing.T) {
	f := factoryfake.New()
	srv := httptest.NewServer(f)
	defer srv.Close()
	url := srv.URL + "/image/376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba/v1.13.9/hcloud-amd64.raw.xz"
	n, err := uncompressedSize(context.Background(), srv.Client(), url)
	if err != nil || n != factoryfake.ImageSize {
		t.Fatalf("size = %d, %v; want %d", n, err, factoryfake.ImageSize)
	}
	if _, err := uncompressedSize(context.Background(), srv.Client(), srv.URL+"/versions"); err == nil {
		t.Error("a non-xz resource gave a size")
	}
}

func TestChooseServerType(t *testing.T) {
	sb := newSandbox(t, 40, nil)
	b := sb.builder(nil)
	ctx := t.Context()
	cases := []struct {
		arch, location, requested, want, wantErr string
	}{
		{arch: "amd64", location: "fsn1", want: "cx23"},
		{arch: "arm64", location: "hel1", want: "cax11"},
		{arch: "amd64", location: "fsn1", requested: "cpx22", want: "cpx22"},
		{arch: "arm64", location: "fsn1", requested: "cx23", wantErr: "not arm64"},
		{arch: "amd64", location: "fsn1", requested: "cx999", wantErr: "does not exist"},
		{arch: "arm64", location: "ash", wantErr: "no arm64 server type is orderable in ash"},
	}
	for _, tc := range cases {
		st, err := b.chooseServerType(ctx, tc.arch, tc.location, tc.requested)
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%+v: err = %v", tc, err)
			}
		case err != nil || st.Name != tc.want:
			t.Errorf("%+v: got %v, %v", tc, st, err)
		}
	}
	img, err := b.debianImage(ctx, "arm64")
	if err != nil || img.OSFlavor != "debian" || img.Architecture != hcloudArch("arm64") {
		t.Errorf("debian arm64 image = %+v, %v", img, err)
	}
}

func TestExplainWrite(t *testing.T) {
	cases := []struct{ stderr, want string }{
		{"x:\n2026 ERROR 404: Not Found.\nxz: (stdin): File format not recognized", "HTTP 404"},
		{"x:\n2026 ERROR 503: Service Unavailable.", "downloading"},
		{"xz: (stdin): Compressed data is corrupt", "decompressing"},
		{"dd: error writing '/dev/sda': Input/output error", "writing the image to /dev/sda failed"},
		{"bash: line 1: wget: command not found", "exit status 127"},
	}
	for _, tc := range cases {
		status := 1
		if strings.Contains(tc.stderr, "not found") && !strings.Contains(tc.stderr, "404") {
			status = 127
		}
		if err := explainWrite("https://f/i.raw.xz", runResult{status: status, stderr: tc.stderr}); !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v", tc.stderr, err)
		}
	}
}
