package addons

import (
	"bytes"
	"encoding/json"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Redacted replaces Secret values in manifests written for review.
const Redacted = "REDACTED"

// Manifest encodes an add-on's objects as multi-document YAML, keys in
// sorted order, objects in apply order. With redact, every Secret's data
// and stringData values read REDACTED.
func Manifest(a Addon, redact bool) ([]byte, error) {
	var buf bytes.Buffer
	for i, o := range a.Objects {
		if redact && o.Kind() == "Secret" {
			o = redactSecret(o)
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(2)
		if err := enc.Encode(map[string]any(o)); err != nil {
			return nil, fmt.Errorf("encode %s: %w", o.Ref(), err)
		}
		if err := enc.Close(); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

// JSON encodes one object as the body of a server-side apply (JSON is
// YAML, which application/apply-patch+yaml accepts).
func (o Object) JSON() ([]byte, error) { return json.Marshal(map[string]any(o)) }

// redactSecret returns a copy of a Secret whose values read REDACTED.
func redactSecret(o Object) Object {
	out := Object{}
	for k, v := range o {
		out[k] = v
	}
	for _, field := range []string{"data", "stringData"} {
		d, ok := o[field].(map[string]any)
		if !ok {
			continue
		}
		r := map[string]any{}
		for k := range d {
			r[k] = Redacted
		}
		out[field] = r
	}
	return out
}
