package rescuefake_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/ohmytalos/ohmytalos/internal/sandbox/rescuefake"
)

const pipeline = "set -o pipefail; wget -nv -O- '%s' | xz -d | dd of=/dev/sda bs=4M conv=sparse status=progress"

type fixture struct {
	srv    *rescuefake.Server
	signer ssh.Signer
	disk   string
	image  []byte
	url    string
}

// newFixture starts an HTTP server with an xz image and a rescue fake on a
// loopback address of its own (127.61.0.0/16 is this package's range).
func newFixture(t *testing.T, ip string, opts ...rescuefake.Option) *fixture {
	t.Helper()
	if _, err := exec.LookPath("xz"); err != nil {
		t.Skip("xz is not installed; the rescue fake decompresses with it")
	}
	image := make([]byte, 3<<20)
	copy(image, "talos disk image")
	copy(image[2<<20:], "second partition")
	cmd := exec.Command("xz", "-c", "-0")
	cmd.Stdin = bytes.NewReader(image)
	compressed, err := cmd.Output()
	if err != nil {
		t.Fatalf("xz: %v", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/image.raw.xz", func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "image.raw.xz", time.Time{}, bytes.NewReader(compressed))
	})
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)

	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	disk := filepath.Join(t.TempDir(), "sda")
	srv, err := rescuefake.Start(t.Context(), net.JoinHostPort(ip, "0"),
		[]string{string(ssh.MarshalAuthorizedKey(signer.PublicKey()))}, disk, hs.Client(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return &fixture{srv: srv, signer: signer, disk: disk, image: image, url: hs.URL + "/image.raw.xz"}
}

func (f *fixture) dial(t *testing.T, auth ...ssh.AuthMethod) (*ssh.Client, error) {
	t.Helper()
	if len(auth) == 0 {
		auth = []ssh.AuthMethod{ssh.PublicKeys(f.signer)}
	}
	return ssh.Dial("tcp", f.srv.Addr(), &ssh.ClientConfig{
		User: "root", Auth: auth, Timeout: 5 * time.Second,
		HostKeyCallback: ssh.FixedHostKey(f.srv.HostKey()),
	})
}

type result struct {
	stdout, stderr string
	status         int
}

func run(t *testing.T, c *ssh.Client, cmd string) result {
	t.Helper()
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sess.Close() }()
	var out, errb bytes.Buffer
	sess.Stdout, sess.Stderr = &out, &errb
	err = sess.Run(cmd)
	status := 0
	var ee *ssh.ExitError
	switch {
	case errors.As(err, &ee):
		status = ee.ExitStatus()
	case err != nil:
		t.Fatalf("run %q: %v", cmd, err)
	}
	return result{out.String(), errb.String(), status}
}

func TestPipelineWritesImage(t *testing.T) {
	f := newFixture(t, "127.61.0.1")
	// Leftovers of the Debian image the server was created with.
	if err := os.WriteFile(f.disk, bytes.Repeat([]byte{0xAB}, 4<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := f.dial(t)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()

	if r := run(t, c, "blkdiscard -f /dev/sda"); r.status != 0 {
		t.Fatalf("blkdiscard: %+v", r)
	}
	cmd := strings.Replace(pipeline, "%s", f.url, 1)
	r := run(t, c, cmd)
	if r.status != 0 {
		t.Fatalf("pipeline status %d, stderr %q", r.status, r.stderr)
	}
	if !strings.Contains(r.stderr, "records out\n3145728 bytes (3.1 MB, 3.0 MiB) copied, ") {
		t.Errorf("stderr lacks dd summary: %q", r.stderr)
	}
	if !strings.Contains(r.stderr, "\r") {
		t.Errorf("stderr lacks progress lines: %q", r.stderr)
	}
	got, err := os.ReadFile(f.disk)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, f.image) {
		t.Errorf("disk differs from image (len %d vs %d)", len(got), len(f.image))
	}
	if f.srv.DiskBytes() != int64(len(f.image)) {
		t.Errorf("DiskBytes = %d, want %d", f.srv.DiskBytes(), len(f.image))
	}
	if r := run(t, c, "sync"); r.status != 0 {
		t.Fatalf("sync: %+v", r)
	}
	want := []string{"blkdiscard -f /dev/sda", cmd, "sync"}
	if got := f.srv.Commands(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("commands = %q, want %q", got, want)
	}
}

func TestAuth(t *testing.T) {
	f := newFixture(t, "127.61.0.2")
	if _, err := f.dial(t, ssh.Password("hunter2")); err == nil {
		t.Error("password login accepted")
	}
	_, other, _ := ed25519.GenerateKey(rand.Reader)
	otherSigner, _ := ssh.NewSignerFromKey(other)
	if _, err := f.dial(t, ssh.PublicKeys(otherSigner)); err == nil || !strings.Contains(err.Error(), "unable to authenticate") {
		t.Errorf("unknown key: err = %v", err)
	}
	if _, err := rescuefake.Start(t.Context(), "127.61.0.2:0", []string{"not a key"}, f.disk, nil); err == nil {
		t.Error("Start accepted a malformed authorized key")
	}
}

func TestFailures(t *testing.T) {
	cases := []struct {
		name   string
		ip     string
		opts   []rescuefake.Option
		url    func(string) string
		status int
		stderr string
	}{
		{"404 with pipefail reports xz", "127.61.1.1", nil, func(u string) string { return u + ".missing" }, 1, "ERROR 404: Not Found."},
		{"download", "127.61.1.2", []rescuefake.Option{rescuefake.FailAt(rescuefake.StageDownload)}, nil, 1, "Connection reset by peer"},
		{"decompress", "127.61.1.3", []rescuefake.Option{rescuefake.FailAt(rescuefake.StageDecompress)}, nil, 1, "Compressed data is corrupt"},
		{"write", "127.61.1.4", []rescuefake.Option{rescuefake.FailAt(rescuefake.StageWrite)}, nil, 1, "dd: error writing '/dev/sda': Input/output error"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.ip, tc.opts...)
			c, err := f.dial(t)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = c.Close() }()
			u := f.url
			if tc.url != nil {
				u = tc.url(u)
			}
			r := run(t, c, strings.Replace(pipeline, "%s", u, 1))
			if r.status != tc.status || !strings.Contains(r.stderr, tc.stderr) {
				t.Errorf("status %d stderr %q; want %d and %q", r.status, r.stderr, tc.status, tc.stderr)
			}
		})
	}
}

func TestCommands(t *testing.T) {
	f := newFixture(t, "127.61.2.1", rescuefake.Machine("aarch64"))
	c, err := f.dial(t)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	cases := []struct {
		cmd    string
		status int
		out    string
	}{
		{"true", 0, ""},
		{"uname -m", 0, "aarch64\n"},
		{"false || echo recovered", 0, "recovered\n"},
		{"false && echo never", 1, ""},
		{"set -e; false; echo never", 1, ""},
		{"nosuchtool --flag", 127, ""},
		{"wget -nv -O- " + f.url + ".missing", 8, ""},
		{"echo 'unterminated", 2, ""},
	}
	for _, tc := range cases {
		r := run(t, c, tc.cmd)
		if r.status != tc.status || r.stdout != tc.out {
			t.Errorf("%q: status %d stdout %q stderr %q; want %d %q", tc.cmd, r.status, r.stdout, r.stderr, tc.status, tc.out)
		}
	}
	if r := run(t, c, "lsblk"); !strings.Contains(r.stdout, "sda      8:0    0 40 GiB") {
		t.Errorf("lsblk: %q", r.stdout)
	}
	// The server's only disk is /dev/sda.
	for cmd, want := range map[string]string{
		"blkdiscard -f /dev/sdb": "blkdiscard: cannot open /dev/sdb: No such file or directory\n",
		"dd of=/dev/sdb bs=4M":   "dd: failed to open '/dev/sdb': No such file or directory\n",
	} {
		if r := run(t, c, cmd); r.status != 1 || r.stderr != want {
			t.Errorf("%q: status %d stderr %q; want 1 %q", cmd, r.status, r.stderr, want)
		}
	}
	if r := run(t, c, "poweroff"); r.status != 0 || !f.srv.Halted() {
		t.Errorf("poweroff: %+v halted=%v", r, f.srv.Halted())
	}
	if _, err := f.dial(t); err == nil {
		t.Error("ssh still answers after poweroff")
	}
}

func TestStalledWriteEndsWithSession(t *testing.T) {
	f := newFixture(t, "127.61.3.1", rescuefake.StallWriteAfter(1<<20))
	c, err := f.dial(t)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	progress := make(chan struct{})
	sess.Stderr = writerFunc(func(p []byte) (int, error) {
		if bytes.Contains(p, []byte("copied")) {
			select {
			case <-progress:
			default:
				close(progress)
			}
		}
		return len(p), nil
	})
	done := make(chan error, 1)
	cmd := strings.Replace(strings.Replace(pipeline, "%s", f.url, 1), "bs=4M", "bs=1M", 1)
	go func() { done <- sess.Run(cmd) }()
	select {
	case <-progress:
	case <-time.After(10 * time.Second):
		t.Fatal("no progress before the stall")
	}
	_ = c.Close() // the builder gives up: the connection drops
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("session did not end after the connection closed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	closed := make(chan error, 1)
	go func() { closed <- f.srv.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Error(err)
		}
	case <-ctx.Done():
		t.Fatal("Close hung with a stalled dd")
	}
	if got := f.srv.DiskBytes(); got != 1<<20 {
		t.Errorf("disk bytes at stall = %d, want %d", got, 1<<20)
	}
}

type writerFunc func([]byte) (int, error)

func (w writerFunc) Write(p []byte) (int, error) { return w(p) }
