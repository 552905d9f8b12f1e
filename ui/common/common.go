// Package common is the plumbing every page and component of the wizard
// shares, in soft-serve's shape: the content size, the styles and the
// keys, as one value. It holds no domain state (no spec, prices or run):
// the root model owns that and hands pages what they need.
package common

// Common is what every page and component receives: the size of the
// content area (without sidebar, status bar and footer), the styles built
// once for the terminal, and the key bindings.
type Common struct {
	Width, Height int
	Styles        Styles
	Keys          KeyMap
}
