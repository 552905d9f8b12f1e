package imaging

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

// newSSHKey generates the throwaway ed25519 key a build logs in with.
func newSSHKey() (ssh.Signer, string, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, "", fmt.Errorf("generate temporary ssh key: %w", err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return nil, "", fmt.Errorf("generate temporary ssh key: %w", err)
	}
	return signer, strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey()))), nil
}

// errAuth marks SSH failures that retrying cannot fix.
var errAuth = errors.New("ssh authentication failed")

// dialRescue connects to the rescue system, retrying while it boots
// (connection refused, timeouts, resets during the handshake) until
// SSHTimeout; a refused key is fatal at once.
//
// The host key cannot be verified: the rescue system generates it at boot and
// the API does not publish it (hcloud-upload-image and Packer accept it
// blindly too). The session only pulls a public image over HTTPS.
func (b *Builder) dialRescue(ctx context.Context, addr string, signer ssh.Signer, attempt func(n int, err error)) (*ssh.Client, error) {
	deadline := time.Now().Add(b.opts.SSHTimeout)
	cfg := &ssh.ClientConfig{
		User:            "root",
		Auth:            []ssh.AuthMethod{ssh.PublicKeys(signer)},
		HostKeyCallback: ssh.InsecureIgnoreHostKey(), //nolint:gosec // see above
		Timeout:         min(30*time.Second, b.opts.SSHTimeout),
	}
	for n := 1; ; n++ {
		c, err := dialContext(ctx, addr, cfg)
		if err == nil {
			return c, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("ssh to the rescue system at %s: %w", addr, ctx.Err())
		}
		if strings.Contains(err.Error(), "unable to authenticate") {
			return nil, fmt.Errorf("ssh to the rescue system at %s: %w: the temporary key was refused (%v); the server may not be in rescue mode", addr, errAuth, err)
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("ssh to the rescue system at %s: still failing after %s (%d attempts): %w; check that the server booted into rescue and port %d is reachable from here", addr, b.opts.SSHTimeout, n, err, b.opts.SSHPort)
		}
		if attempt != nil {
			attempt(n, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("ssh to the rescue system at %s: %w", addr, ctx.Err())
		case <-time.After(b.opts.PollInterval):
		}
	}
}

// dialContext is ssh.Dial with a context for the TCP connect and handshake.
func dialContext(ctx context.Context, addr string, cfg *ssh.ClientConfig) (*ssh.Client, error) {
	d := net.Dialer{Timeout: cfg.Timeout}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	_ = conn.SetDeadline(time.Now().Add(cfg.Timeout))
	sc, chans, reqs, err := ssh.NewClientConn(conn, addr, cfg)
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	_ = conn.SetDeadline(time.Time{})
	return ssh.NewClient(sc, chans, reqs), nil
}

// discardCommand empties the disk first, so bytes of the Debian image that
// the Talos image does not overwrite are not kept in the snapshot (it halves
// a Talos snapshot; found by hcloud-upload-image v1.1). Failure only costs
// snapshot size, so it is not fatal.
const discardCommand = "blkdiscard -f /dev/sda"

// writeCommand is the pipeline run in the rescue system (bash is root's
// shell there). pipefail makes a failed download fail the command;
// conv=sparse skips the zero blocks that blkdiscard already zeroed.
func writeCommand(imageURL string) (string, error) {
	u, err := url.Parse(imageURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", fmt.Errorf("image URL %q is not an http(s) URL", imageURL)
	}
	return "set -o pipefail; wget -nv -O- " + shellQuote(imageURL) +
		" | xz -d | dd of=/dev/sda bs=4M conv=sparse status=progress", nil
}

// syncCommand flushes the page cache before the server is powered off.
const syncCommand = "sync"

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// runResult is what a remote command left behind.
type runResult struct {
	status int
	stderr string // tail, without progress lines
}

// run executes cmd in a new session. onBytes, if set, receives dd's byte
// counts as its progress lines arrive on stderr. Cancelling ctx closes the
// session; the caller closes the client.
func run(ctx context.Context, c *ssh.Client, cmd string, onBytes func(int64)) (runResult, error) {
	sess, err := c.NewSession()
	if err != nil {
		return runResult{}, fmt.Errorf("open ssh session: %w", err)
	}
	defer func() { _ = sess.Close() }()
	pw := &progressWriter{onBytes: onBytes}
	var out bytes.Buffer
	sess.Stdout, sess.Stderr = &out, pw
	done := make(chan error, 1)
	go func() { done <- sess.Run(cmd) }()
	select {
	case err = <-done:
	case <-ctx.Done():
		_ = sess.Close()
		return runResult{status: -1, stderr: pw.tail()}, ctx.Err()
	}
	res := runResult{stderr: pw.tail()}
	var ee *ssh.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.status = ee.ExitStatus()
	default:
		return res, fmt.Errorf("run %q: %w", firstWord(cmd), err)
	}
	return res, nil
}

func firstWord(cmd string) string {
	f := strings.Fields(cmd)
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

var (
	ddBytes   = regexp.MustCompile(`^(\d+) bytes`)
	ddRecords = regexp.MustCompile(`^\d+\+\d+ records (in|out)$`)
)

// progressWriter splits stderr on "\r" and "\n", reports dd's byte counts
// and keeps the last non-progress lines for error messages.
type progressWriter struct {
	mu      sync.Mutex
	onBytes func(int64)
	partial []byte
	lines   []string
}

func (p *progressWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.partial = append(p.partial, b...)
	for {
		i := bytes.IndexAny(p.partial, "\r\n")
		if i < 0 {
			break
		}
		p.line(string(p.partial[:i]))
		p.partial = p.partial[i+1:]
	}
	return len(b), nil
}

func (p *progressWriter) line(l string) {
	if m := ddBytes.FindStringSubmatch(l); m != nil {
		if n, err := strconv.ParseInt(m[1], 10, 64); err == nil && p.onBytes != nil {
			p.onBytes(n)
		}
		return // statistics, not a cause
	}
	if ddRecords.MatchString(l) || strings.TrimSpace(l) == "" {
		return
	}
	p.lines = append(p.lines, l)
	if len(p.lines) > 8 {
		p.lines = p.lines[len(p.lines)-8:]
	}
}

func (p *progressWriter) tail() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	lines := append([]string(nil), p.lines...)
	if s := strings.TrimSpace(string(p.partial)); s != "" {
		lines = append(lines, s)
	}
	return strings.Join(lines, "\n")
}

// explainWrite turns a failed pipeline into an operator message.
func explainWrite(imageURL string, res runResult) error {
	tail := res.stderr
	switch {
	case strings.Contains(tail, "ERROR 404"):
		return fmt.Errorf("the image factory has no disk image at %s (HTTP 404): check the schematic ID and Talos version, or register the schematic first (exit %d)", imageURL, res.status)
	case strings.Contains(tail, "ERROR "):
		return fmt.Errorf("downloading %s from the rescue system failed (exit %d): %s; check that the factory is reachable from Hetzner and retry", imageURL, res.status, lastLines(tail, 3))
	case strings.Contains(tail, "Read error") || strings.Contains(tail, "failed:"):
		return fmt.Errorf("the download of %s broke off (exit %d): %s; retry", imageURL, res.status, lastLines(tail, 3))
	case strings.Contains(tail, "xz:"):
		return fmt.Errorf("decompressing %s failed (exit %d): %s; the download may be truncated or not an xz disk image", imageURL, res.status, lastLines(tail, 3))
	case strings.Contains(tail, "dd:"):
		return fmt.Errorf("writing the image to /dev/sda failed (exit %d): %s; retry (a new temporary server gets a new disk)", res.status, lastLines(tail, 3))
	}
	return fmt.Errorf("writing %s to /dev/sda failed with exit status %d: %s", imageURL, res.status, lastLines(tail, 3))
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
