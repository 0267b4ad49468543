package sqlstore

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"github.com/threadwright/threadwright/conversation"
)

// What the stores write must be storable in both backends: PostgreSQL's TEXT holds
// neither NUL characters nor invalid UTF-8, and its JSONB refuses the escape \u0000
// ("unsupported Unicode escape sequence") and unpaired UTF-16 surrogate escapes. A
// Slack message can carry any of them, and the stores repair rather than lose it:
// Text and JSON return a storable copy, the same in both backends, so that what
// comes back does not depend on the store.

// Text returns s made storable: NUL characters removed and each byte that is not
// part of a UTF-8 encoding replaced by U+FFFD (as encoding/json and a range loop
// decode it). It returns s itself, without allocating, when it is storable already.
func Text(s string) string {
	if utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		if r != 0 {
			b.WriteRune(r) // utf8.RuneError for a byte that is not UTF-8
		}
	}
	return b.String()
}

// validUTF8 returns j with each byte that is not part of a UTF-8 encoding replaced by
// U+FFFD, as Text does.
func validUTF8(j []byte) []byte {
	if utf8.Valid(j) {
		return j
	}
	out := make([]byte, 0, len(j)+8)
	for len(j) > 0 {
		r, n := utf8.DecodeRune(j)
		out = utf8.AppendRune(out, r)
		j = j[n:]
	}
	return out
}

// JSON returns j, valid JSON, made storable: in its strings (keys included) the escape
// \u0000 is dropped, an escaped UTF-16 surrogate that is not half of a pair becomes
// \ufffd, and each byte that is not part of a UTF-8 encoding becomes U+FFFD (as Text
// repairs text). It returns j itself when it is storable already; it does not validate j
// (callers do, with json.Valid).
func JSON(j []byte) []byte {
	if utf8.Valid(j) && !bytes.Contains(j, []byte(`\u`)) {
		return j // the common case: no \u escape at all
	}
	if utf8.Valid(j) && !needsEscapeRepair(j) {
		return j
	}
	j = validUTF8(j)
	out := make([]byte, 0, len(j))
	inString := false
	for i := 0; i < len(j); i++ {
		c := j[i]
		switch {
		case !inString:
			inString = c == '"'
			out = append(out, c)
		case c == '"':
			inString = false
			out = append(out, c)
		case c != '\\':
			out = append(out, c)
		case i+1 < len(j) && j[i+1] != 'u':
			// A two-character escape (\\, \", \n, …): copied whole, so that the
			// backslash of \\ never starts another escape.
			out = append(out, c, j[i+1])
			i++
		default:
			// \uXXXX (valid JSON has four hex digits after \u).
			r, ok := hex4(j, i+2)
			if !ok {
				out = append(out, c)
				continue
			}
			switch {
			case r == 0:
				// dropped
			case isHighSurrogate(r):
				if low, ok := escapeAt(j, i+6); ok && isLowSurrogate(low) {
					out = append(out, j[i:i+12]...)
					i += 6
				} else {
					out = append(out, `\ufffd`...)
				}
			case isLowSurrogate(r):
				out = append(out, `\ufffd`...)
			default:
				out = append(out, j[i:i+6]...)
			}
			i += 5
		}
	}
	return out
}

// needsEscapeRepair reports whether j, valid UTF-8, holds an escape that JSON
// rewrites: \u0000 or an unpaired surrogate. It scans like JSON, without copying.
func needsEscapeRepair(j []byte) bool {
	inString := false
	for i := 0; i < len(j); i++ {
		c := j[i]
		switch {
		case !inString:
			inString = c == '"'
		case c == '"':
			inString = false
		case c != '\\':
		case i+1 < len(j) && j[i+1] != 'u':
			i++
		default:
			r, ok := hex4(j, i+2)
			if !ok {
				continue
			}
			switch {
			case r == 0, isLowSurrogate(r):
				return true
			case isHighSurrogate(r):
				if low, ok := escapeAt(j, i+6); !ok || !isLowSurrogate(low) {
					return true
				}
				i += 6
			}
			i += 5
		}
	}
	return false
}

// escapeAt returns the code unit of the escape \uXXXX at j[i:], if there is one.
func escapeAt(j []byte, i int) (rune, bool) {
	if i+1 >= len(j) || j[i] != '\\' || j[i+1] != 'u' {
		return 0, false
	}
	return hex4(j, i+2)
}

// hex4 returns the value of the four hexadecimal digits at j[i:].
func hex4(j []byte, i int) (rune, bool) {
	if i+4 > len(j) {
		return 0, false
	}
	var r rune
	for _, c := range j[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

func isHighSurrogate(r rune) bool { return 0xD800 <= r && r < 0xDC00 }
func isLowSurrogate(r rune) bool  { return 0xDC00 <= r && r < 0xE000 }

// Messages returns msgs with their text columns (role, user id, text, Slack ts) made
// storable (Text) and their meta made storable (JSON). It returns msgs itself when
// every message is storable already.
func Messages(msgs []conversation.Message) []conversation.Message {
	var out []conversation.Message
	for i, m := range msgs {
		r := m
		r.Role = conversation.Role(Text(string(m.Role)))
		r.UserID, r.Text, r.SlackTS = Text(m.UserID), Text(m.Text), Text(m.SlackTS)
		if len(m.Meta) > 0 {
			r.Meta = JSON(m.Meta)
		}
		changed := r.Role != m.Role || r.UserID != m.UserID || r.Text != m.Text || r.SlackTS != m.SlackTS ||
			!bytes.Equal(r.Meta, m.Meta)
		if changed && out == nil {
			out = make([]conversation.Message, len(msgs))
			copy(out, msgs[:i])
		}
		if out != nil {
			out[i] = r
		}
	}
	if out == nil {
		return msgs
	}
	return out
}
