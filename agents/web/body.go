package web

import (
	"strings"
	"unicode/utf8"
)

// trimPartialRune drops an incomplete UTF-8 sequence that a cut left at the end of b.
func trimPartialRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		c := b[len(b)-i]
		if c < utf8.RuneSelf {
			return b // ASCII: nothing pending
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			return b
		}
	}
	return b
}

// decodeText returns body as a string. Without a usable charset, text that is not
// valid UTF-8 is read as Windows-1252 (the web's fallback, a superset of ISO-8859-1);
// text in other declared charsets keeps its ASCII, and the rest becomes U+FFFD.
func decodeText(body []byte, charset string) string {
	switch strings.ToLower(strings.TrimSpace(charset)) {
	case "iso-8859-1", "latin1", "latin-1", "l1", "iso_8859-1", "windows-1252", "cp1252", "us-ascii", "ascii":
		return decodeWindows1252(body)
	case "", "utf-8", "utf8":
		if utf8.Valid(body) {
			return string(body)
		}
		return decodeWindows1252(body)
	}
	return strings.ToValidUTF8(string(body), "\uFFFD")
}

// windows1252 maps the bytes 0x80 to 0x9F of Windows-1252; the others are ISO-8859-1,
// whose bytes are their code points.
var windows1252 = [32]rune{
	'€', '\u0081', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\u008d', 'Ž', '\u008f',
	'\u0090', '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', '\u009d', 'ž', 'Ÿ',
}

func decodeWindows1252(body []byte) string {
	var b strings.Builder
	b.Grow(len(body))
	for _, c := range body {
		switch {
		case c < 0x80:
			b.WriteByte(c)
		case c < 0xA0:
			b.WriteRune(windows1252[c-0x80])
		default:
			b.WriteRune(rune(c))
		}
	}
	return b.String()
}
