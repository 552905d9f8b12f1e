package secrets_test

import (
	"strings"
	"testing"

	"github.com/ohmytalos/ohmytalos/internal/secrets"
)

func TestBoundOutputRedactsThenBounds(t *testing.T) {
	session := "sess-" + strings.Repeat("k", 40)
	out := []byte("error: session " + session + " rejected\n" + strings.Repeat("é", 2000))
	got := secrets.BoundOutput(out, secrets.NewValue(session))
	if strings.Contains(got, session) || !strings.Contains(got, secrets.Redacted) {
		t.Errorf("the session was not redacted: %q", got[:80])
	}
	if len(got) > secrets.MaxQuoted+40 || !strings.Contains(got, "more bytes)") {
		t.Errorf("output not bounded (%d bytes): %q", len(got), got[len(got)-40:])
	}
	if !strings.HasPrefix(got, "error: session") {
		t.Errorf("the start of the message is lost: %q", got[:40])
	}
	if secrets.BoundOutput([]byte("  \n")) != "(no message on stderr)" {
		t.Error("an empty stderr says nothing")
	}
}

func TestRedactCoversQuotedForms(t *testing.T) {
	key := "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIB" + strings.Repeat("x", 40) + "\n-----END EC PRIVATE KEY-----\n"
	var set secrets.Set
	set.Add(secrets.KeyForms(key)...)
	for _, text := range []string{
		`{"error":"` + strings.ReplaceAll(strings.TrimSpace(key), "\n", `\n`) + `"}`,
		"bad line: MHcCAQEEIB" + strings.Repeat("x", 40),
	} {
		if got := set.Redact(text); strings.Contains(got, strings.Repeat("x", 40)) {
			t.Errorf("key material left in %q", got)
		}
	}
}
