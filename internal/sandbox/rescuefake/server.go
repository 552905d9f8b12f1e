// Package rescuefake is a fake of the Hetzner rescue system as seen over SSH.
//
// The snapshot builder boots a throwaway server into rescue mode, logs in as
// root with a temporary key and streams a Talos disk image onto /dev/sda with
// a shell pipeline. This package answers that SSH session for real: public-key
// authentication against the keys Hetzner would have installed, "exec"
// requests interpreted by a small shell that understands the builder's
// pipeline (wget | xz -d | dd), downloads over HTTP, decompresses with the xz
// tool, and writes into a file standing in for /dev/sda, printing what the
// real tools print. Every command is recorded so tests can assert what ran.
package rescuefake

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"

	"golang.org/x/crypto/ssh"
)

// Server is one fake rescue system listening for SSH on a loopback address.
// It is safe for concurrent use.
type Server struct {
	cfg      config
	disk     string
	hc       *http.Client
	ln       net.Listener
	sshCfg   *ssh.ServerConfig
	hostKey  ssh.PublicKey
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	closeErr error
	once     sync.Once

	mu        sync.Mutex
	commands  []string
	diskBytes int64
	conns     map[*ssh.ServerConn]struct{}
	halted    bool
}

// Start listens on addr ("127.x.y.z:PORT") and serves SSH until ctx is done
// or Close is called. Only the OpenSSH public keys in authorized may log in
// (any user name, as root is the only user of the rescue system); passwords
// are refused. disk is the file that stands in for /dev/sda; it is created if
// missing and never truncated except by blkdiscard. hc fetches what wget
// downloads (nil means http.DefaultClient).
func Start(ctx context.Context, addr string, authorized []string, disk string, hc *http.Client, opts ...Option) (*Server, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	if disk == "" {
		return nil, errors.New("start rescue fake: disk path is empty; pass a file path that stands in for /dev/sda")
	}
	keys := map[string]bool{}
	for _, a := range authorized {
		k, _, _, _, err := ssh.ParseAuthorizedKey([]byte(a))
		if err != nil {
			return nil, fmt.Errorf("start rescue fake: authorized key %q is not an OpenSSH public key: %w", truncate(a, 40), err)
		}
		keys[string(k.Marshal())] = true
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("start rescue fake: generate host key: %w", err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		return nil, fmt.Errorf("start rescue fake: host key signer: %w", err)
	}
	sshCfg := &ssh.ServerConfig{
		PublicKeyCallback: func(meta ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			if keys[string(key.Marshal())] {
				return &ssh.Permissions{}, nil
			}
			return nil, fmt.Errorf("public key %s of %s is not authorized", ssh.FingerprintSHA256(key), meta.User())
		},
		ServerVersion: "SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3",
	}
	sshCfg.AddHostKey(signer)

	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("start rescue fake: listen on %s: %w", addr, err)
	}
	sctx, cancel := context.WithCancel(ctx)
	s := &Server{
		cfg: cfg, disk: disk, hc: hc, ln: ln, sshCfg: sshCfg, hostKey: signer.PublicKey(),
		ctx: sctx, cancel: cancel, conns: map[*ssh.ServerConn]struct{}{},
	}
	s.wg.Add(2)
	go func() {
		defer s.wg.Done()
		<-sctx.Done()
		s.shutdown()
	}()
	go func() {
		defer s.wg.Done()
		s.acceptLoop()
	}()
	return s, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// HostKey is the server's (per-instance, random) ed25519 host key.
func (s *Server) HostKey() ssh.PublicKey { return s.hostKey }

// Close stops the listener, drops every connection (running commands see
// their session end) and waits for the server's goroutines.
func (s *Server) Close() error {
	s.cancel()
	s.wg.Wait()
	return s.closeErr
}

// Commands returns every command run, in the order they were received.
func (s *Server) Commands() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.commands...)
}

// DiskBytes returns the number of bytes dd copied to the disk (all runs).
func (s *Server) DiskBytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.diskBytes
}

// Halted reports whether a shutdown command (poweroff, shutdown, halt) ran.
func (s *Server) Halted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.halted
}

func (s *Server) shutdown() {
	s.once.Do(func() {
		if err := s.ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			s.closeErr = fmt.Errorf("close rescue fake listener: %w", err)
		}
		s.mu.Lock()
		for c := range s.conns {
			_ = c.Close()
		}
		s.mu.Unlock()
	})
}

func (s *Server) acceptLoop() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serveConn(c)
		}()
	}
}

func (s *Server) serveConn(c net.Conn) {
	conn, chans, reqs, err := ssh.NewServerConn(c, s.sshCfg)
	if err != nil {
		_ = c.Close()
		return
	}
	s.mu.Lock()
	if s.ctx.Err() != nil {
		s.mu.Unlock()
		_ = conn.Close()
		return
	}
	s.conns[conn] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.conns, conn)
		s.mu.Unlock()
		_ = conn.Close()
	}()

	cctx, cancel := context.WithCancel(s.ctx)
	defer cancel()
	go func() {
		_ = conn.Wait()
		cancel()
	}()
	go ssh.DiscardRequests(reqs)

	var wg sync.WaitGroup
	for nc := range chans {
		if nc.ChannelType() != "session" {
			_ = nc.Reject(ssh.UnknownChannelType, "only session channels are supported")
			continue
		}
		ch, chReqs, err := nc.Accept()
		if err != nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.serveSession(cctx, ch, chReqs)
		}()
	}
	cancel()
	wg.Wait()
}

// serveSession answers one session channel: env and pty requests are
// accepted and ignored, one exec request runs a command, shells are refused.
func (s *Server) serveSession(ctx context.Context, ch ssh.Channel, reqs <-chan *ssh.Request) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	started := false
	for {
		select {
		case req, ok := <-reqs:
			if !ok {
				// The client closed the channel: stop what runs for it.
				cancel()
				if started {
					<-done
				}
				_ = ch.Close()
				return
			}
			switch req.Type {
			case "exec":
				var payload struct{ Command string }
				if err := ssh.Unmarshal(req.Payload, &payload); err != nil || started {
					_ = req.Reply(false, nil)
					continue
				}
				started = true
				_ = req.Reply(true, nil)
				go func() {
					defer close(done)
					status := s.run(sctx, payload.Command, ch, ch.Stderr())
					_, _ = ch.SendRequest("exit-status", false, ssh.Marshal(struct{ Status uint32 }{uint32(status)}))
					_ = ch.CloseWrite()
					_ = ch.Close()
					if s.Halted() {
						// The machine went down: SSH stops answering.
						s.shutdown()
					}
				}()
			case "env", "pty-req", "window-change":
				_ = req.Reply(req.WantReply, nil)
			default:
				_ = req.Reply(false, nil)
			}
		case <-ctx.Done():
			if started {
				<-done
			}
			_ = ch.Close()
			return
		}
	}
}

// record appends a command to the history.
func (s *Server) record(cmd string) {
	s.mu.Lock()
	s.commands = append(s.commands, cmd)
	s.mu.Unlock()
}

func (s *Server) addDiskBytes(n int64) {
	s.mu.Lock()
	s.diskBytes += n
	s.mu.Unlock()
}

func (s *Server) setHalted() {
	s.mu.Lock()
	s.halted = true
	s.mu.Unlock()
}

func truncate(v string, n int) string {
	v = strings.TrimSpace(v)
	if len(v) <= n {
		return v
	}
	return v[:n] + "..."
}
