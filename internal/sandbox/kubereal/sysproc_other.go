//go:build !linux

package kubereal

import "syscall"

// sysProcAttr: off Linux there is no parent-death signal; Stop and the
// context end the children.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
