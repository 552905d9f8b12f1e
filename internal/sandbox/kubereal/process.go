package kubereal

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// process is one running control-plane program; its output goes to
// DIR/NAME.log.
type process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error // set before done closes
}

func startProcess(dir, name, bin string, args []string) (*process, error) {
	logPath := filepath.Join(dir, name+".log")

	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", logPath, err)
	}

	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Dir = dir
	cmd.SysProcAttr = sysProcAttr()

	if err := cmd.Start(); err != nil {
		_ = f.Close()

		return nil, fmt.Errorf("start %s (%s): %w; rebuild the binaries by removing the kubebin cache directory", name, bin, err)
	}

	p := &process{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}

	go func() {
		p.err = cmd.Wait()
		_ = f.Close()

		close(p.done)
	}()

	return p, nil
}

// exited says whether the process has ended, and how.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// stop asks the process to end (SIGTERM), and kills it after grace.
func (p *process) stop(grace time.Duration) {
	if ok, _ := p.exited(); ok {
		return
	}

	_ = p.cmd.Process.Signal(syscall.SIGTERM)

	select {
	case <-p.done:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// logTail is the end of the process's log, for an error message.
func (p *process) logTail() string {
	b, err := os.ReadFile(p.log)
	if err != nil {
		return ""
	}

	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 15 {
		lines = lines[len(lines)-15:]
	}

	return strings.Join(lines, "\n")
}

// exitError describes a process that ended while it should run.
func (p *process) exitError() error {
	_, err := p.exited()
	if err == nil {
		err = errors.New("exited")
	}

	return fmt.Errorf("%s stopped: %w; its log %s ends with:\n%s", p.name, err, p.log, p.logTail())
}
