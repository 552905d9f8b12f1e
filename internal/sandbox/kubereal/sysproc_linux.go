package kubereal

import "syscall"

// sysProcAttr kills the child when the sandbox process dies, however it
// dies (Pdeathsig), so no control plane outlives it.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}
