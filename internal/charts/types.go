// Package charts fetches, verifies, caches and renders the Helm charts the
// add-ons come from, and merges ohmytalos's values with the operator's.
// See docs/addons.md.
package charts

// Ref names a chart: where it comes from and what it must be.
type Ref struct {
	// Repository is a Helm repository (https://…, with an index.yaml) or
	// an OCI registry path (oci://…).
	Repository string `yaml:"repository,omitempty" json:"repository,omitempty"`
	// Name is the chart's name in the repository.
	Name string `yaml:"name,omitempty" json:"name,omitempty"`
	// Version is the chart version as the repository's index lists it.
	Version string `yaml:"version,omitempty" json:"version,omitempty"`
	// Digest is "sha256:<hex>" of the chart archive as the repository's
	// index lists it; "" when not pinned.
	Digest string `yaml:"digest,omitempty" json:"digest,omitempty"`
	// Path is a local chart directory or .tgz; when set it wins over
	// Repository (air-gapped sites).
	Path string `yaml:"path,omitempty" json:"path,omitempty"`
}

// Release names a Helm release.
type Release struct {
	Name, Namespace string
}

// Value is one chart value ohmytalos sets, and why.
type Value struct {
	// Path is the dotted path into the chart's values, e.g. "ipam.mode".
	Path string
	// Value is what ohmytalos sets there.
	Value any
	// Why is one line on why it is set (printed as a comment by
	// `ohmytalos addons values NAME`).
	Why string
	// Required marks a value Talos on Hetzner needs: overriding it gets a
	// plan warning naming it (it is not refused).
	Required bool
}
