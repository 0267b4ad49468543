package textcut

import (
	"fmt"
	"strings"
	"unicode"
)

// Printable returns s fit for a terminal: every control character (C0 and C1, DEL,
// newlines and tabs included) and every invisible format character (bidirectional
// overrides such as U+202E, zero-width ones) replaced by its Go escape (\x1b,
// \u202e), so that text from the store cannot move the cursor, set the clipboard
// (OSC 52), forge an output line or reorder what a person reads. Bytes that are not
// UTF-8 become \ufffd.
func Printable(s string) string {
	if !strings.ContainsFunc(s, unprintable) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < 0x80 && unprintable(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unprintable(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Unprintable reports whether s holds a character Printable escapes.
func Unprintable(s string) bool { return strings.ContainsFunc(s, unprintable) }

func unprintable(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == unicode.ReplacementChar
}
