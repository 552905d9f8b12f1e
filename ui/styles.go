package ui

import (
	"github.com/charmbracelet/lipgloss"

	"github.com/ohmytalos/ohmytalos/ui/common"
)

// Styles is every style of the wizard (see common.Styles).
type Styles = common.Styles

// KeyMap is every key binding of the wizard (see common.KeyMap).
type KeyMap = common.KeyMap

// NewStyles builds the wizard's styles on renderer r (see
// common.NewStyles).
func NewStyles(r *lipgloss.Renderer, noColor bool) Styles { return common.NewStyles(r, noColor) }

// DefaultKeyMap returns the wizard's bindings.
func DefaultKeyMap() KeyMap { return common.DefaultKeyMap() }
