package secrets

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"sync"
)

// Set collects every secret value a process has seen (looked up, read
// from the state, found in the environment) so that one redaction at the
// top (the command's error, its JSON and text output) covers them all,
// whichever path a message took. It is safe for concurrent use.
type Set struct {
	mu      sync.Mutex
	values  []Value
	sources []func() []Value
}

// minRecorded is the shortest value Add records: a credential is longer,
// and redacting a short word (a variable set to "1") everywhere would
// garble every message.
const minRecorded = 8

// Add records values; blank and very short ones are ignored.
func (s *Set) Add(vs ...Value) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range vs {
		if len(strings.TrimSpace(v.Reveal())) >= minRecorded {
			s.values = append(s.values, v)
		}
	}
}

// AddSource records a function asked for its values at every redaction
// (a resolver's cache, which grows while a run goes on).
func (s *Set) AddSource(fn func() []Value) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sources = append(s.sources, fn)
}

// Values returns every recorded value and those of the sources.
func (s *Set) Values() []Value {
	s.mu.Lock()
	vals := append([]Value{}, s.values...)
	srcs := append([]func() []Value{}, s.sources...)
	s.mu.Unlock()
	for _, fn := range srcs {
		vals = append(vals, fn()...)
	}
	return vals
}

// Redact replaces every value of the set in text (see Redact).
func (s *Set) Redact(text string) string {
	return Redact(text, s.Values()...)
}

// Writer returns a writer that redacts every Write before passing it on.
// Encoders and renderers write a document or a line per call, so a value
// is never split between two writes.
func (s *Set) Writer(w io.Writer) io.Writer { return redactWriter{w: w, set: s} }

type redactWriter struct {
	w   io.Writer
	set *Set
}

func (r redactWriter) Write(p []byte) (int, error) {
	out := r.set.Redact(string(p))
	if _, err := io.WriteString(r.w, out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// KeyForms returns the ways a private key or other multi-line secret shows
// up in text: raw is PEM (or a base64 encoding of PEM, as Talos bundles,
// machine configs, talosconfigs and kubeconfigs carry keys); the result
// holds the PEM, its base64 encoding and every long line of its body, so
// an error quoting one line of a key redacts that line too.
func KeyForms(raw string) []Value {
	pem := raw
	if dec, err := base64.StdEncoding.DecodeString(strings.TrimSpace(raw)); err == nil && strings.Contains(string(dec), "-----BEGIN") {
		pem = string(dec)
	}
	out := []Value{NewValue(raw), NewValue(pem), NewValue(base64.StdEncoding.EncodeToString([]byte(pem)))}
	for _, line := range strings.Split(pem, "\n") {
		if line = strings.TrimSpace(line); len(line) >= 32 && !strings.HasPrefix(line, "-----") {
			out = append(out, NewValue(line))
		}
	}
	return out
}

// quotedForms are how a secret appears once quoted: JSON-escaped (the
// JSON documents and events) and Go-quoted (%q in an error).
func quotedForms(secret string) []string {
	var out []string
	if b, err := json.Marshal(secret); err == nil {
		if q := string(b[1 : len(b)-1]); q != secret {
			out = append(out, q)
		}
	}
	if q := strconv.Quote(secret); q[1:len(q)-1] != secret {
		out = append(out, q[1:len(q)-1])
	}
	return out
}
