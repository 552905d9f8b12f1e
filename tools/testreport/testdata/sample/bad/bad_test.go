// Package bad is a sample with a failing test and a failing subtest.
package bad

import "testing"

func TestFails(t *testing.T) { t.Error("the failure message") }

func TestSub(t *testing.T) {
	t.Run("ok", func(t *testing.T) {})
	t.Run("broken", func(t *testing.T) { t.Fatal("the subtest failure") })
}

func TestPasses(t *testing.T) {}
