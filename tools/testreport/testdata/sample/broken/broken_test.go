// Package broken does not build.
package broken

import "testing"

func TestNever(t *testing.T) { undefined() }
