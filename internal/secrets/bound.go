package secrets

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxQuoted is how many bytes of another program's output an error quotes.
const MaxQuoted = 512

// BoundOutput is what another program's output (a failing bw run's
// stderr) contributes to an error: redacted first, then at most MaxQuoted
// bytes, cut on a character boundary, with how much was left out.
func BoundOutput(out []byte, redact ...Value) string {
	msg := strings.TrimSpace(Redact(string(out), redact...))
	if msg == "" {
		return "(no message on stderr)"
	}
	if len(msg) <= MaxQuoted {
		return msg
	}
	cut := MaxQuoted
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... (%d more bytes)", msg[:cut], len(msg)-cut)
}
