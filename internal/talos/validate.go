package talos

import (
	"errors"
	"strings"

	"github.com/siderolabs/talos/pkg/machinery/config"
)

// ValidationError lists the problems Talos' own validation found in a
// rendered config, one line per problem, each naming the setting (e.g.
// "v1alpha1.Config: invalid machine node taints: invalid taint effect").
type ValidationError struct {
	// Problems are the flattened validation messages, in Talos' order.
	Problems []string
}

// Error implements error.
func (e *ValidationError) Error() string {
	return strings.Join(e.Problems, "; ")
}

// cloudMode is the validation runtime mode of a Hetzner Cloud node booted
// from a Talos snapshot: already installed (RequiresInstall false), not in a
// container. It implements machinery's validation.RuntimeMode.
type cloudMode struct{}

func (cloudMode) String() string        { return "cloud" }
func (cloudMode) RequiresInstall() bool { return false }
func (cloudMode) InContainer() bool     { return false }

// validate runs Talos' validation of the whole document set and flattens
// its nested multi-errors into a ValidationError.
func validate(cfg config.Provider) ([]string, error) {
	warnings, err := cfg.Validate(cloudMode{})
	if err != nil {
		return warnings, &ValidationError{Problems: flatten(err, "")}
	}

	return warnings, nil
}

// flatten turns nested multi-errors (hashicorp/go-multierror as used by the
// machinery, or errors.Join) into one message per leaf, keeping the context
// prefixes that wrapped each group ("v1alpha1.Config: ...").
func flatten(err error, prefix string) []string {
	if err == nil {
		return nil
	}

	var children []error

	switch e := err.(type) {
	case interface{ WrappedErrors() []error }:
		children = e.WrappedErrors()
	case interface{ Unwrap() []error }:
		children = e.Unwrap()
	}

	if children != nil {
		var out []string
		for _, c := range children {
			out = append(out, flatten(c, prefix)...)
		}

		return out
	}

	if inner := errors.Unwrap(err); inner != nil && isMulti(inner) {
		if p, ok := strings.CutSuffix(err.Error(), inner.Error()); ok {
			return flatten(inner, prefix+p)
		}
	}

	return []string{prefix + strings.TrimSpace(err.Error())}
}

func isMulti(err error) bool {
	switch err.(type) {
	case interface{ WrappedErrors() []error }, interface{ Unwrap() []error }:
		return true
	}

	return false
}
