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
	valid := utf8.Valid(j)
	if valid && (!bytes.Contains(j, []byte(`\u`)) || !repairEscapes(j, nil)) {
		return j // the common case: nothing to repair, nothing copied
	}
	if !valid {
		j = validUTF8(j)
	}
	out := make([]byte, 0, len(j))
	repairEscapes(j, &out)
	return out
}

// replacementEscape is U+FFFD as a JSON escape.
var replacementEscape = []byte(`\ufffd`)

// repairEscapes scans j, valid UTF-8 JSON, as JSON reads it (every backslash inside
// a string starts an escape, so the backslash of \\ never starts another), and
// reports whether it holds an escape that JSON rewrites: \u0000 or an unpaired
// surrogate. When out is not nil, j is appended to it with those escapes rewritten.
func repairEscapes(j []byte, out *[]byte) (repaired bool) {
	emit := func(b ...byte) {
		if out != nil {
			*out = append(*out, b...)
		}
	}
	inString := false
	for i := 0; i < len(j); i++ {
		c := j[i]
		switch {
		case !inString:
			inString = c == '"'
			emit(c)
		case c == '"':
			inString = false
			emit(c)
		case c != '\\':
			emit(c)
		case i+1 < len(j) && j[i+1] != 'u':
			// A two-character escape (\\, \", \n, …): copied whole.
			emit(c, j[i+1])
			i++
		default:
			// \uXXXX (valid JSON has four hex digits after \u).
			r, ok := hex4(j, i+2)
			if !ok {
				emit(c)
				continue
			}
			switch {
			case r == 0:
				repaired = true // dropped
			case isHighSurrogate(r):
				if low, ok := escapeAt(j, i+6); ok && isLowSurrogate(low) {
					emit(j[i : i+12]...)
					i += 6
				} else {
					repaired = true
					emit(replacementEscape...)
				}
			case isLowSurrogate(r):
				repaired = true
				emit(replacementEscape...)
			default:
				emit(j[i : i+6]...)
			}
			i += 5
		}
		if repaired && out == nil {
			return true
		}
	}
	return repaired
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
