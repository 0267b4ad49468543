package bot

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxMessageChars is the most characters threadwright puts in one message's text.
// Slack truncates text past 40,000 characters and recommends at most 4,000
// (chat.postMessage, "Truncating content"); threadwright stays a little below that
// recommendation. The fences a split adds count within it.
const MaxMessageChars = 3900

// fence is Markdown/mrkdwn's code-block delimiter.
const fence = "```"

// SplitText splits text into pieces of at most limit characters (runes), preferring to
// break between paragraphs, then lines, then sentences, then words. A piece that ends
// inside a ``` code block closes it and the next piece reopens it, so each piece
// renders on its own. Empty text gives no pieces. limit must leave room for the fences
// (limit > 16).
func SplitText(text string, limit int) []string {
	pieces, _ := splitFirst(text, limit, -1)
	return pieces
}

// splitFirst splits text as SplitText does, but stops after n pieces (n < 0: no
// stop) and returns the text left over: "" when the pieces hold all of it, otherwise
// the rest, starting with a reopened ``` fence when the last piece closed one.
func splitFirst(text string, limit, n int) (pieces []string, rest string) {
	text = strings.TrimSpace(text)
	reopen := false
	for text != "" {
		prefix := ""
		if reopen {
			prefix = fence + "\n"
		}
		if len(pieces) == n {
			return pieces, prefix + text
		}
		room := limit - utf8.RuneCountInString(prefix) - len("\n"+fence)
		if !longerThan(text, limit-utf8.RuneCountInString(prefix)) {
			pieces = append(pieces, prefix+text)
			break
		}
		cut := breakPoint(text, room)
		piece := strings.TrimRightFunc(text[:cut], unicode.IsSpace)
		text = strings.TrimLeftFunc(text[cut:], unicode.IsSpace)
		open := reopen != (strings.Count(piece, fence)%2 == 1)
		piece = prefix + piece
		if open {
			piece += "\n" + fence
		}
		pieces = append(pieces, piece)
		reopen = open
	}
	return pieces, ""
}

// breakPoint returns the byte offset at which to cut text so that the first part has
// at most room runes, at the best boundary available in the second half of that span.
func breakPoint(text string, room int) int {
	limit := byteOffset(text, room)
	window := text[:limit]
	for _, sep := range []string{"\n\n", "\n", ". ", " "} {
		if i := strings.LastIndex(window, sep); i >= limit/2 {
			return i + len(sep)
		}
	}
	return limit
}

// longerThan reports whether s has more than n runes, reading at most n+1 of them.
func longerThan(s string, n int) bool {
	for range s {
		if n == 0 {
			return true
		}
		n--
	}
	return false
}

// byteOffset returns the byte offset of the rune at index n of s (len(s) if shorter).
func byteOffset(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}
