package textcut

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Index returns the byte offset in s of its rune number n, counted from 0: where s
// is cut to keep its first n runes. It is len(s) when s has no more than n runes, and
// 0 when n is 0 or less.
func Index(s string, n int) int {
	if n <= 0 {
		return 0
	}
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}

// Runes returns the first n runes of s, or s when it has no more than n runes.
func Runes(s string, n int) string {
	return s[:Index(s, n)]
}

// Bytes returns the longest beginning of s that has at most n bytes and does not end
// inside a UTF-8 sequence: s when it has no more than n bytes, "" when n is 0 or
// less.
func Bytes[T string | []byte](s T, n int) T {
	if n >= len(s) {
		return s
	}
	n = max(n, 0)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Ellipsis returns s when it has at most n runes. Otherwise it returns the first n-1
// runes of s, without the runes at their end for which trim reports true (none when
// trim is nil), followed by "…": at most n runes in all, and "" when n is 0 or less.
//
// Callers that show the text to people pass the runes a cut should not leave
// dangling: unicode.IsSpace, a Cutset such as Cutset(" "), or a function that also
// drops punctuation.
func Ellipsis(s string, n int, trim func(rune) bool) string {
	if Index(s, n) == len(s) {
		return s
	}
	if n <= 0 {
		return ""
	}
	head := Runes(s, n-1)
	if trim != nil {
		head = strings.TrimRightFunc(head, trim)
	}
	return head + "…"
}

// Cutset returns the function that reports whether a rune is one of chars, for
// Ellipsis: Cutset(" \n") trims what strings.TrimRight(s, " \n") does.
func Cutset(chars string) func(rune) bool {
	return func(r rune) bool { return strings.ContainsRune(chars, r) }
}

// Truncated is the mark of a text cut for a model or a log by BytesMark: a tool's
// result, a prompt's quote of a message, a model's reply in a log record.
const Truncated = "… [truncated]"

// BytesMark returns s when it has at most n bytes. Otherwise it returns the longest
// beginning of s that leaves room for mark within n bytes (cut as Bytes cuts),
// followed by mark: at most n bytes in all when mark fits in n, and mark alone when
// it does not.
func BytesMark(s string, n int, mark string) string {
	if len(s) <= n {
		return s
	}
	return Bytes(s, n-len(mark)) + mark
}

// AtBreak returns s when it has at most n runes. Otherwise it returns the first n
// runes of s, shortened to end before the last of the runes in breaks (such as
// "\n " for a line or a word break) when that one is among their last window runes
// and is not their first rune, and without the white space at its end
// (unicode.IsSpace): at most n runes.
func AtBreak(s string, n, window int, breaks string) string {
	head := Runes(s, n)
	if len(head) == len(s) {
		return s
	}
	if i := strings.LastIndexAny(head, breaks); i > 0 && utf8.RuneCountInString(head[i:]) <= window {
		head = head[:i]
	}
	return strings.TrimRightFunc(head, unicode.IsSpace)
}

// Noted returns s when it has at most n runes. Otherwise it returns the first n runes
// of s followed by note(kept, total), where kept is n and total the number of runes
// in s: a note such as "[… the first 100 of 2345 characters are shown]" tells a
// reader that the text goes on. The note is not counted in n.
func Noted(s string, n int, note func(kept, total int) string) string {
	head := Runes(s, n)
	if len(head) == len(s) {
		return s
	}
	return head + note(utf8.RuneCountInString(head), utf8.RuneCountInString(s))
}
