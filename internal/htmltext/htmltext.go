package htmltext

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Words writes the text s with its whitespace collapsed: word is called with each
// run of non-space characters, and *space is set where whitespace separates a word
// from the one before it, including whitespace at the start and end of s (which
// separates it from the text around it). word is expected to consume *space, writing
// a single space when it is set and clearing it.
func Words(s string, space *bool, word func(string)) {
	if s == "" {
		return
	}
	first, _ := utf8.DecodeRuneInString(s)
	last, _ := utf8.DecodeLastRuneInString(s)
	if unicode.IsSpace(first) {
		*space = true
	}
	for i, f := range strings.Fields(s) {
		if i > 0 {
			*space = true
		}
		word(f)
	}
	if unicode.IsSpace(last) {
		*space = true
	}
}

// NonContent reports the elements that both converters drop with what they hold:
// code, styling, embedded media and navigation (script, style, noscript, template,
// svg, iframe, object, canvas and nav).
func NonContent(a atom.Atom) bool {
	switch a {
	case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Svg,
		atom.Iframe, atom.Object, atom.Canvas, atom.Nav:
		return true
	}
	return false
}

// Skip tracks an element being dropped with its content. Its zero value skips
// nothing.
type Skip struct {
	tag   string // the name of the element being skipped, when depth > 0
	depth int    // how deep in elements of that name
}

// Start starts skipping the element named tag, whose start tag was just read.
func (s *Skip) Start(tag string) { s.tag, s.depth = tag, 1 }

// Skipping reports whether an element is being skipped.
func (s *Skip) Skipping() bool { return s.depth > 0 }

// Token reports whether a token of type tt (with name tag, for tags) is inside the
// element being skipped, and so to be skipped itself; the end tag that closes the
// element is, and it ends the skipping. Elements of the same name nested in the
// skipped one are counted so that the right end tag ends it.
func (s *Skip) Token(tt html.TokenType, tag string) bool {
	if s.depth == 0 {
		return false
	}
	if tag == s.tag {
		switch tt {
		case html.StartTagToken:
			s.depth++
		case html.EndTagToken:
			s.depth--
		}
	}
	return true
}
