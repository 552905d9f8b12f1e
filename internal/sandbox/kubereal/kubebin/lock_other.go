//go:build !unix

package kubebin

import (
	"context"
	"errors"
	"os/exec"
)

// lockDir is not implemented off unix: the real control plane runs on
// Linux and macOS only.
func lockDir(context.Context, string, func(int)) (func(), error) {
	return nil, errors.New("the sandbox's real Kubernetes control plane runs on Linux and macOS only")
}

func inGroup(*exec.Cmd) {}

func killGroup(*exec.Cmd) {}
