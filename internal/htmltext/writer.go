package htmltext

import (
	"bytes"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/threadwright/threadwright/internal/textcut"
)

// writer writes Markdown text: words separated by single spaces, with the line
// breaks and the prefix that blocks ask for written only before the next word, so
// that empty elements leave nothing behind. It writes at most limit bytes; what
// does not fit is cut at a character boundary, and all that follows is dropped.
type writer struct {
	b     []byte
	limit int
	// cut says the text reached limit: b is final.
	cut bool
	// brk is the line breaks to write before the next word: 0, 1 or 2 (a blank line).
	brk int
	// prefix is written after the breaks, before the next word.
	prefix prefix
	// space says a space separates the next word from the last.
	space bool
	// glue says the next word follows the last without a space (inside backticks).
	glue bool
}

// prefix is what starts a line of a heading or list item: "## ", "    - ", "  3. ".
type prefix struct {
	heading int // 1 to 6, for "# " to "###### "; 0 for none
	level   int // of a list item: the depth of its list, 1 to MaxListDepth; 0 for none
	number  int // of an item of an ordered list; 0 for "- "
}

// MaxListDepth is the deepest list nesting that Convert shows by indentation: lists
// nested deeper are written as if at this depth, numbered on from the items at this
// depth, so that unclosed <ul> tags cannot make each item's indentation longer than
// the last one's.
const MaxListDepth = 8

// indent is the indentation of a list item at MaxListDepth.
var indent = strings.Repeat("  ", MaxListDepth-1)

// paragraph asks for a blank line before the next word.
func (w *writer) paragraph() { w.brk = 2 }

// line asks for a line break before the next word.
func (w *writer) line() { w.brk = max(w.brk, 1) }

// text writes s with its whitespace collapsed, as a browser shows it: a space
// (Unicode's, no-break space included) at its start or end separates it from the
// text around it.
func (w *writer) text(s []byte) {
	for i := 0; i < len(s); {
		if n := spaceAt(s, i); n > 0 {
			w.space = true
			i += n
			continue
		}
		j := i
		for j < len(s) && spaceAt(s, j) == 0 {
			_, n := utf8.DecodeRune(s[j:])
			j += n
		}
		word(w, s[i:j])
		i = j
	}
}

// spaceAt returns the length of the space character at s[i], or 0 if s[i] starts
// something else.
func spaceAt(s []byte, i int) int {
	if c := s[i]; c < utf8.RuneSelf {
		switch c {
		case ' ', '\t', '\n', '\v', '\f', '\r':
			return 1
		}
		return 0
	}
	r, n := utf8.DecodeRune(s[i:])
	if unicode.IsSpace(r) {
		return n
	}
	return 0
}

// word writes s after the pending line breaks and prefix, or after a space.
func word[T string | []byte](w *writer, s T) {
	w.separate()
	put(w, s)
}

// separate writes what is due before the next word: the pending line breaks and
// prefix, or a space.
func (w *writer) separate() {
	switch {
	case w.brk > 0:
		if len(w.b) > 0 {
			put(w, "\n\n"[:w.brk])
		}
		w.putPrefix()
		w.brk, w.prefix = 0, prefix{}
	case w.space && !w.glue && len(w.b) > 0:
		put(w, " ")
	}
	w.space, w.glue = false, false
}

// putPrefix writes w.prefix.
func (w *writer) putPrefix() {
	p := w.prefix
	switch {
	case p.heading > 0:
		put(w, "######"[:p.heading])
		put(w, " ")
	case p.level > 0:
		put(w, indent[:2*(p.level-1)])
		if p.number > 0 {
			var digits [20]byte
			put(w, strconv.AppendInt(digits[:0], int64(p.number), 10))
			put(w, ". ")
		} else {
			put(w, "- ")
		}
	}
}

// put writes s as it is, or what fits of it under the limit.
func put[T string | []byte](w *writer, s T) {
	if w.cut {
		return
	}
	n := len(s)
	if room := w.limit - len(w.b); n > room {
		n = len(textcut.Bytes(s, room))
		w.cut = true
	}
	w.b = append(grow(w.b, n, w.limit), s[:n]...)
}

// grow returns b with room for n more bytes. It doubles the capacity, up to most,
// where append would grow a large slice by a quarter, which allocates about five
// times the final size on the way.
func grow(b []byte, n, most int) []byte {
	if len(b)+n <= cap(b) {
		return b
	}
	c := max(min(max(2*cap(b), 256), most), len(b)+n)
	return append(make([]byte, 0, c), b...)
}

// fenced writes code as a fenced code block in language lang (its info string, or
// ""), with a fence longer than any run of backticks in it.
func (w *writer) fenced(code []byte, lang string) {
	code = bytes.TrimPrefix(code, []byte("\n")) // as a browser drops a newline right after <pre>
	code = bytes.TrimRight(code, " \t\n")
	if len(bytes.TrimSpace(code)) == 0 {
		return
	}
	fence := max(3, longestRun(code, '`')+1)
	w.paragraph()
	w.separate()
	w.putFence(fence)
	put(w, lang)
	put(w, "\n")
	put(w, code)
	put(w, "\n")
	w.putFence(fence)
	w.paragraph()
}

// backticks is written in pieces for a fence of any length.
const backticks = "````````````````````````````````"

// putFence writes n backticks.
func (w *writer) putFence(n int) {
	for n > 0 && !w.cut {
		k := min(n, len(backticks))
		put(w, backticks[:k])
		n -= k
	}
}

// longestRun returns the length of the longest run of c in s.
func longestRun(s []byte, c byte) int {
	longest, run := 0, 0
	for _, b := range s {
		if b != c {
			run = 0
			continue
		}
		run++
		longest = max(longest, run)
	}
	return longest
}
