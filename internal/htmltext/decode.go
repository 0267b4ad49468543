package htmltext

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html/charset"
)

// windows1252 is the web's fallback encoding, a superset of ISO-8859-1 (the HTML
// standard reads a page labelled ISO-8859-1 or US-ASCII as Windows-1252 too).
var windows1252, _ = charset.Lookup("windows-1252")

// Decode returns body, bytes whose MIME type (with its parameters, as in a
// Content-Type header) is contentType, as UTF-8 text: a fetched page's body
// (fetch_url) or a file's (internal/attachment). Its character set is the first of
// (as the HTML standard determines a page's,
// https://html.spec.whatwg.org/multipage/parsing.html#determining-the-character-encoding,
// with golang.org/x/net/html/charset):
//
//   - a byte order mark (UTF-8, UTF-16LE, UTF-16BE);
//   - the charset parameter of contentType, when it names an encoding of the
//     Encoding Standard (windows-1251, KOI8-R, Shift_JIS, GBK, EUC-KR, ISO-8859-x, …);
//   - for an HTML document (html), a <meta charset> or <meta http-equiv="Content-Type">
//     among its first 1024 bytes;
//   - UTF-8 when body is valid UTF-8, and Windows-1252 when it is not.
//
// A page labelled UTF-8 (or Windows-1252 by its <meta> only) that is not valid UTF-8
// is read as Windows-1252, and one labelled Windows-1252 by its <meta> only that is
// valid UTF-8 as UTF-8: such labels are more often wrong than the bytes. The byte
// order mark is dropped; a byte sequence invalid in the character set becomes
// U+FFFD. cut says body was cut at the byte bound: a character the cut split is
// dropped. The text has at most 3 bytes for each byte of body.
func Decode(body []byte, contentType string, html, cut bool) string {
	enc, name, certain := charset.DetermineEncoding(body, contentType)
	if !certain && !html {
		name = "" // only an HTML page names its charset in a <meta>
	}
	if name == "" || name == "utf-8" || (!certain && name == "windows-1252") {
		if cut {
			body = trimPartialRune(body)
		}
		if utf8.Valid(body) {
			return strings.TrimPrefix(string(body), "\uFEFF")
		}
		enc = windows1252
	}
	b, err := enc.NewDecoder().Bytes(body)
	text := string(b)
	if err != nil { // the decoders of the Encoding Standard replace what they cannot read
		text = strings.ToValidUTF8(string(body), "\uFFFD")
	}
	if cut {
		text = strings.TrimSuffix(text, "\uFFFD")
	}
	return strings.TrimPrefix(text, "\uFEFF")
}

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
