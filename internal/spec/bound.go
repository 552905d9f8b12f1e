package spec

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxQuoted is how many characters of an operator's value a problem
// quotes; the rest is cut and marked "…". A 10 MB name must not come back
// in full in every error.
const MaxQuoted = 64

// maxMessage bounds a whole reason or fix, for values written unquoted.
const maxMessage = 16 * MaxQuoted

// maxReported is how many problems Error lists before "and N more".
const maxReported = 50

// Shorten cuts s to MaxQuoted characters, marking the cut with "…".
func Shorten(s string) string {
	if utf8.RuneCountInString(s) <= MaxQuoted {
		return s
	}
	return string([]rune(s)[:MaxQuoted]) + "…"
}

// boundQuoted shortens every Go-quoted string in s (as %q writes them)
// longer than MaxQuoted characters, then bounds the whole message.
func boundQuoted(s string) string {
	if len(s) <= MaxQuoted {
		return s
	}
	var b strings.Builder
	for rest := s; rest != ""; {
		j := strings.IndexByte(rest, '"')
		if j < 0 {
			b.WriteString(rest)
			break
		}
		b.WriteString(rest[:j])
		rest = rest[j:]
		lit, err := strconv.QuotedPrefix(rest)
		if err != nil {
			b.WriteByte('"')
			rest = rest[1:]
			continue
		}
		rest = rest[len(lit):]
		if v, err := strconv.Unquote(lit); err == nil && utf8.RuneCountInString(v) > MaxQuoted {
			lit = strconv.Quote(Shorten(v))
		}
		b.WriteString(lit)
	}
	out := b.String()
	if len(out) > maxMessage {
		out = strings.ToValidUTF8(out[:maxMessage], "") + "…"
	}
	return out
}

// bounded returns the problems with their fields and quoted values cut to
// a readable size.
func (ps Problems) bounded() Problems {
	for i := range ps {
		ps[i].Field = Shorten(ps[i].Field)
		ps[i].Reason = boundQuoted(ps[i].Reason)
		ps[i].Fix = boundQuoted(ps[i].Fix)
	}
	return ps
}
