package rescuefake

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"
)

// exec runs one simple command and returns its exit status.
func (s *Server) exec(ctx context.Context, argv []string, in io.Reader, out, errw io.Writer) int {
	switch argv[0] {
	case "true", "sync", ":":
		return 0
	case "false":
		return 1
	case "echo":
		fmt.Fprintln(out, strings.Join(argv[1:], " "))
		return 0
	case "wget":
		return s.wget(ctx, argv[1:], out, errw)
	case "xz":
		return s.xz(ctx, argv[1:], in, out, errw)
	case "dd":
		return s.dd(ctx, argv[1:], in, errw)
	case "blkdiscard":
		return s.blkdiscard(argv[1:], errw)
	case "uname":
		return s.uname(argv[1:], out, errw)
	case "lsblk":
		fmt.Fprintf(out, "NAME   MAJ:MIN RM  SIZE RO TYPE MOUNTPOINTS\nsda      8:0    0 %s  0 disk \nsr0     11:0    1 1024M  0 rom  \n", iec(s.cfg.diskSize))
		return 0
	case "hostname":
		fmt.Fprintln(out, "rescue")
		return 0
	case "poweroff", "halt", "shutdown", "reboot":
		// The machine goes down: no new SSH connections from now on; the
		// session's connection drops once its exit status is sent.
		s.setHalted()
		_ = s.ln.Close()
		return 0
	default:
		fmt.Fprintf(errw, "bash: line 1: %s: command not found\n", argv[0])
		return 127
	}
}

// wget supports what the builder passes: -O- / -O - (write to stdout),
// -q/--quiet, -nv/--no-verbose, and one URL. Exit codes follow wget(1):
// 4 network failure, 8 server error response.
func (s *Server) wget(ctx context.Context, args []string, out, errw io.Writer) int {
	quiet, toStdout := false, false
	var url string
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-q" || a == "--quiet":
			quiet = true
		case a == "-nv" || a == "--no-verbose":
		case a == "-O-" || a == "--output-document=-":
			toStdout = true
		case a == "-O" && i+1 < len(args) && args[i+1] == "-":
			toStdout = true
			i++
		case strings.HasPrefix(a, "-"):
			fmt.Fprintf(errw, "wget: unrecognized option '%s'\n", a)
			return 2
		default:
			url = a
		}
	}
	if url == "" {
		fmt.Fprintln(errw, "wget: missing URL")
		return 1
	}
	if !toStdout {
		fmt.Fprintln(errw, "wget: the rescue fake only writes downloads to stdout (-O-)")
		return 3
	}
	stamp := time.Now().UTC().Format("2006-01-02 15:04:05")
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		fmt.Fprintf(errw, "%s: Invalid URL %s: %v\n", url, url, err)
		return 1
	}
	resp, err := s.hc.Do(req)
	if err != nil {
		if !quiet {
			fmt.Fprintf(errw, "failed: %v.\n", rootCause(err))
		}
		return 4
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		if !quiet {
			fmt.Fprintf(errw, "%s:\n%s ERROR %d: %s.\n", url, stamp, resp.StatusCode, http.StatusText(resp.StatusCode))
		}
		return 8
	}
	var body io.Reader = resp.Body
	if s.cfg.fail[StageDownload] {
		n := max(resp.ContentLength/2, 0)
		body = io.LimitReader(resp.Body, n)
		written, _ := io.Copy(out, body)
		if !quiet {
			fmt.Fprintf(errw, "%s:\n%s Read error at byte %d/%d (Connection reset by peer). Giving up.\n", url, stamp, written, resp.ContentLength)
		}
		return 4
	}
	n, err := io.Copy(out, body)
	if err != nil {
		if errors.Is(err, errBrokenPipe) {
			return 3 // downstream exited; wget reports a write error
		}
		if !quiet {
			fmt.Fprintf(errw, "%s:\n%s Read error at byte %d (%v). Giving up.\n", url, stamp, n, rootCause(err))
		}
		return 4
	}
	if !quiet {
		fmt.Fprintf(errw, "%s URL:%s [%d/%d] -> \"-\" [1]\n", stamp, url, n, n)
	}
	return 0
}

// xz runs the real xz tool for -d (decompress) with stdin and stdout, so
// the fake checks the stream exactly as the rescue system would.
func (s *Server) xz(ctx context.Context, args []string, in io.Reader, out, errw io.Writer) int {
	decompress := false
	for _, a := range args {
		if !strings.HasPrefix(a, "-") || strings.HasPrefix(a, "--") && a != "--decompress" && a != "--stdout" {
			fmt.Fprintf(errw, "xz: the rescue fake only supports xz -d on stdin, got %q\n", a)
			return 1
		}
		if a == "--decompress" || strings.ContainsRune(strings.TrimPrefix(a, "-"), 'd') {
			decompress = true
		}
	}
	if !decompress {
		fmt.Fprintln(errw, "xz: the rescue fake only supports decompression (xz -d)")
		return 1
	}
	if s.cfg.fail[StageDecompress] {
		_, _ = io.Copy(io.Discard, io.LimitReader(in, 1<<16))
		fmt.Fprintln(errw, "xz: (stdin): Compressed data is corrupt")
		return 1
	}
	path, err := exec.LookPath("xz")
	if err != nil {
		fmt.Fprintln(errw, "bash: line 1: xz: command not found (the rescue fake runs the host's xz: install xz-utils)")
		return 127
	}
	cmd := exec.CommandContext(ctx, path, "-d", "-c")
	cmd.Args[0] = "xz" // as the shell would run it: messages start with "xz:"
	cmd.Stdin, cmd.Stdout, cmd.Stderr = in, out, errw
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() > 0 {
			return ee.ExitCode()
		}
		if errors.Is(err, errBrokenPipe) {
			return 141 // SIGPIPE
		}
		fmt.Fprintf(errw, "xz: %v\n", err)
		return 1
	}
	return 0
}

// openDisk opens dev, which must be the server's only disk, /dev/sda;
// failed is the command's message on a failure, a format naming the
// device.
func (s *Server) openDisk(errw io.Writer, dev, failed string) (*os.File, bool) {
	if dev != "/dev/sda" {
		fmt.Fprintf(errw, failed+": No such file or directory\n", dev)
		return nil, false
	}
	f, err := os.OpenFile(s.disk, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		fmt.Fprintf(errw, failed+": %v\n", dev, err)
		return nil, false
	}
	return f, true
}

func (s *Server) blkdiscard(args []string, errw io.Writer) int {
	dev := ""
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			dev = a
		}
	}
	f, ok := s.openDisk(errw, dev, "blkdiscard: cannot open %s")
	if !ok {
		return 1
	}
	// Discarding a thin-provisioned disk reads back as zeros: an empty file.
	err := f.Truncate(0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fmt.Fprintf(errw, "blkdiscard: /dev/sda: BLKDISCARD ioctl failed: %v\n", err)
		return 1
	}
	return 0
}

func (s *Server) uname(args []string, out, errw io.Writer) int {
	const kernel, version = "6.12.12", "#1 SMP PREEMPT_DYNAMIC Debian 6.12.12-1 (2025-02-02)"
	if len(args) == 0 || args[0] == "-s" {
		fmt.Fprintln(out, "Linux")
		return 0
	}
	switch args[0] {
	case "-a":
		fmt.Fprintf(out, "Linux rescue %s %s %s GNU/Linux\n", kernel, version, s.cfg.machine)
	case "-m":
		fmt.Fprintln(out, s.cfg.machine)
	case "-r":
		fmt.Fprintln(out, kernel)
	default:
		fmt.Fprintf(errw, "uname: invalid option -- '%s'\n", strings.TrimLeft(args[0], "-"))
		return 1
	}
	return 0
}

// rootCause unwraps url.Error and friends to the innermost message.
func rootCause(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
}
