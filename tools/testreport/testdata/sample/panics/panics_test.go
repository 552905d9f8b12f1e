// Package panics is a sample whose test panics, which ends its test binary.
package panics

import "testing"

func TestPanics(t *testing.T) { panic("boom") }
