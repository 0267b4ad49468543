package htmltext

import (
	"bytes"
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// maxTitle bounds Document.Title, in bytes.
const maxTitle = 1024

// Options configure Convert. The zero value writes no links and bounds the text by
// the size of the document alone.
type Options struct {
	// Base, when not nil, has links written as "text (url)", url resolved against
	// Base; only http and https links to other pages are written (not fragments of
	// the page, javascript: or mailto:), and a link without text shows the alt text
	// of its image. The URLs written add up to at most the size of the document
	// plus 1 KiB: links past that show their text only. When nil, links are left
	// out and their text kept.
	Base *url.URL
	// TitleHeading heads the text with the title as "# Title" when the body has no
	// h1 heading.
	TitleHeading bool
	// MaxBytes bounds the text, in bytes, below the bound Convert keeps anyway (4
	// bytes per byte of the document plus 1 KiB); 0 or less leaves that bound alone.
	MaxBytes int
}

// Document is an HTML document converted by Convert.
type Document struct {
	// Title is the text of the first <title> element, its whitespace collapsed, at
	// most 1 KiB long; "" without one.
	Title string
	// Text is the readable text of the document as Markdown.
	Text string
	// Cut reports that Text stops early: the whole would be longer than the bound.
	Cut bool
}

// Convert returns the readable text of the HTML document doc as Markdown: headings
// (h1 to h6) become "#" to "######" headings, paragraphs and other blocks are
// separated by blank lines, list items start with "- " or, in ordered lists, "1. ",
// indented by two spaces per level of nesting up to MaxListDepth, table cells are
// separated by " | " and rows by line breaks, preformatted text becomes a fenced code
// block (in the language that its code's class names, as in class="language-go"),
// and inline code (code, kbd, samp) is put in backticks. Other markup is dropped and
// whitespace collapsed, as a browser does.
//
// What is not content is dropped with what it holds: scripts, styles, templates,
// embedded media (svg, iframe, object, canvas, math), navigation (nav), form
// controls (select, button, textarea), dialogs, elements marked hidden or
// aria-hidden="true", and the header and footer of the page, those outside any
// article or main element (the site's banner and footer, not an article's).
//
// The text is cut, and Document.Cut set, where it would grow longer than
// opts.MaxBytes or than 4 bytes per byte of doc plus 1 KiB.
func Convert(doc string, opts Options) Document {
	limit := 4*len(doc) + 1<<10
	if opts.MaxBytes > 0 {
		limit = min(limit, opts.MaxBytes)
	}
	c := &converter{
		z:      html.NewTokenizer(strings.NewReader(doc)),
		docLen: len(doc),
		w:      writer{limit: limit},
	}
	if opts.Base != nil {
		c.base, c.baseLen, c.urlBudget = opts.Base, len(opts.Base.String()), len(doc)+1<<10
	}
	for !c.w.cut {
		tt := c.z.Next()
		if tt == html.ErrorToken {
			break // io.EOF: the tokenizer reads from a string
		}
		c.token(tt)
	}
	c.endPre()
	c.endLink()

	text := bytes.TrimSpace(c.w.b)
	if opts.TitleHeading && len(c.title) > 0 && !c.hasH1 {
		d := Document{Title: string(c.title)}
		d.Text, d.Cut = withTitle(c.title, text, c.w.cut, limit)
		return d
	}
	return Document{Title: string(c.title), Text: string(text), Cut: c.w.cut}
}

// withTitle returns text headed by the title as "# Title", within limit bytes, and
// whether it is cut.
func withTitle(title, text []byte, cut bool, limit int) (string, bool) {
	if len("# \n\n")+len(title)+len(text) <= limit {
		return strings.TrimSpace("# " + string(title) + "\n\n" + string(text)), cut // one copy
	}
	w := writer{limit: limit}
	put(&w, "# ")
	put(&w, title)
	put(&w, "\n\n")
	put(&w, text)
	return string(bytes.TrimSpace(w.b)), true
}

// converter is the state of one Convert: what it knows of the elements open at the
// token being read.
type converter struct {
	z      *html.Tokenizer
	docLen int
	w      writer

	base      *url.URL // of links; nil leaves them out
	baseLen   int      // of base as a string
	urlBudget int      // bytes of link URLs that may still be written

	title []byte // of the first title element
	hasH1 bool

	skip    skip // the element being dropped with its content
	content int  // open article and main elements: their header and footer are content

	depth int               // open lists; may exceed MaxListDepth
	lists [MaxListDepth]int // per level of list: 0 for ul, else the next number of ol
	cells int               // cells so far in the table row
	code  int               // open inline code elements

	inPre   bool
	pre     []byte // the text of the pre element being read
	preText bool   // pre has more than whitespace
	lang    string // of pre's code, from its class language-…

	link link // the <a> element being read, with Base
}

// token converts the token just read, of type tt.
func (c *converter) token(tt html.TokenType) {
	switch tt {
	case html.TextToken:
		if c.skip.active() {
			return
		}
		text := c.z.Text()
		if c.inPre {
			c.addPre(text)
			c.preText = c.preText || len(bytes.TrimSpace(text)) > 0
			return
		}
		c.w.text(text)

	case html.StartTagToken, html.SelfClosingTagToken:
		name, hasAttr := c.z.TagName()
		if c.skip.token(tt, name) {
			return
		}
		a := atom.Lookup(name)
		var at attrs
		if hasAttr {
			at = readAttrs(c.z)
		}
		if tt == html.StartTagToken && !void(a) && c.dropped(a, at.hidden) {
			c.skip.start(name)
			return
		}
		c.start(a, tt == html.SelfClosingTagToken, at)

	case html.EndTagToken:
		name, _ := c.z.TagName()
		if c.skip.token(tt, name) {
			return
		}
		c.end(atom.Lookup(name))
	}
}

// start converts the start tag of an element a, its attributes at.
func (c *converter) start(a atom.Atom, selfClosing bool, at attrs) {
	w := &c.w
	if c.inPre {
		switch {
		case a == atom.Br:
			c.addPre([]byte("\n"))
		case a == atom.Code && !c.preText && c.lang == "":
			c.lang = language(at.class)
		}
		return
	}
	switch a {
	case atom.Title:
		if !selfClosing {
			c.readTitle()
		}
	case atom.Article, atom.Main:
		c.content++
		w.paragraph()
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		if selfClosing {
			return
		}
		level := headingLevel(a)
		c.hasH1 = c.hasH1 || level == 1
		w.paragraph()
		w.prefix = prefix{heading: level}
	case atom.Pre:
		w.paragraph()
		c.inPre, c.pre, c.preText, c.lang = true, c.pre[:0], false, language(at.class)
	case atom.Ul, atom.Ol:
		c.startList(a == atom.Ol)
	case atom.Li:
		c.startItem()
	case atom.Tr:
		w.line()
		c.cells = 0
	case atom.Td, atom.Th:
		if c.cells > 0 {
			w.space = true
			word(w, "|")
			w.space = true
		}
		c.cells++
	case atom.Br:
		w.line()
	case atom.Code, atom.Kbd, atom.Samp:
		if !selfClosing {
			c.code++
			word(w, "`")
			w.glue = true
		}
	case atom.A:
		if c.base != nil {
			c.endLink()
			c.link = link{open: true, href: string(at.href), start: len(w.b)}
		}
	case atom.Img:
		if c.link.open && c.link.alt == nil {
			c.link.alt = append([]byte{}, bytes.TrimSpace(at.alt)...)
		}
	default:
		if block(a) {
			w.paragraph()
		}
	}
}

// readTitle reads the text of a <title>, which the tokenizer gives as one text token,
// unless the document's title is read already.
func (c *converter) readTitle() {
	if c.z.Next() == html.TextToken && c.title == nil {
		t := writer{limit: maxTitle}
		t.text(c.z.Text())
		c.title = append([]byte{}, t.b...)
	}
}

// startList opens a list, one level deeper (numbered for an <ol>), on a new line.
func (c *converter) startList(numbered bool) {
	c.depth++
	c.lists[min(c.depth, MaxListDepth)-1] = 0
	if numbered {
		c.lists[min(c.depth, MaxListDepth)-1] = 1
	}
	c.w.line()
}

// startItem opens a list item on a new line, with the bullet or the number of its
// list's level.
func (c *converter) startItem() {
	w := &c.w
	w.line()
	level := max(min(c.depth, MaxListDepth), 1)
	w.prefix = prefix{level: level}
	if c.depth > 0 && c.lists[level-1] > 0 {
		w.prefix.number = c.lists[level-1]
		c.lists[level-1]++
	}
}

// end converts the end tag of an element a.
func (c *converter) end(a atom.Atom) {
	w := &c.w
	if c.inPre {
		if a == atom.Pre {
			c.endPre()
		}
		return
	}
	switch a {
	case atom.Article, atom.Main:
		c.content = max(c.content-1, 0)
		w.paragraph()
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		w.prefix = prefix{}
		w.paragraph()
	case atom.Ul, atom.Ol:
		c.depth = max(c.depth-1, 0)
		w.line()
	case atom.Li, atom.Tr:
		w.prefix = prefix{}
		w.line()
	case atom.Code, atom.Kbd, atom.Samp:
		if c.code > 0 {
			c.code--
			w.glue = true
			word(w, "`")
		}
	case atom.A:
		c.endLink()
	default:
		if block(a) {
			w.paragraph()
		}
	}
}

// addPre adds s to the text of the pre element being read.
func (c *converter) addPre(s []byte) { c.pre = append(grow(c.pre, len(s), c.docLen), s...) }

// endPre writes the pre element being read, if any, as a fenced code block.
func (c *converter) endPre() {
	if c.inPre {
		c.inPre = false
		c.w.fenced(c.pre, c.lang)
	}
}

// link is an <a> element being read.
type link struct {
	open  bool
	href  string // as written in the document
	start int    // the length of the text before the link
	alt   []byte // of the first image in the link
}

// endLink ends the link being read, if any: it writes " (url)" after the link's
// text, or after the alt text of its image when it has no text.
func (c *converter) endLink() {
	l := c.link
	c.link = link{}
	if !l.open || strings.TrimSpace(l.href) == "" {
		return
	}
	label := bytes.TrimSpace(c.w.b[min(l.start, len(c.w.b)):])
	if len(label) == 0 {
		if len(l.alt) == 0 {
			return // an icon without text: noise
		}
		c.w.text(l.alt)
		label = l.alt
	}
	// Resolved only for a link shown, and only while the URLs written add up to no
	// more than the document: resolving allocates a few times a URL's length, and a
	// long base URL would make it much more than what the document holds.
	if c.baseLen+3*len(l.href) > c.urlBudget {
		return
	}
	href := resolve(c.base, l.href)
	c.urlBudget -= len(href)
	if href != "" && string(label) != href {
		// Right after the text, before what is pending for the next word.
		put(&c.w, " (")
		put(&c.w, href)
		put(&c.w, ")")
	}
}

// resolve resolves href against base and returns it if it is an http(s) URL to
// another page; "" otherwise (javascript:, mailto:, a fragment of this page, …).
func resolve(base *url.URL, href string) string {
	href = strings.TrimSpace(href)
	if href == "" || strings.HasPrefix(href, "#") {
		return ""
	}
	u, err := base.Parse(href)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	return u.String()
}

// attrs are the attributes of a start tag that Convert reads. The slices point into
// the tokenizer's buffer: they are valid until its next token.
type attrs struct {
	hidden bool // hidden, or aria-hidden="true"
	href   []byte
	alt    []byte
	class  []byte
}

// readAttrs reads the attributes of the start tag z is at.
func readAttrs(z *html.Tokenizer) attrs {
	var at attrs
	for more := true; more; {
		var key, val []byte
		key, val, more = z.TagAttr()
		switch string(key) {
		case "hidden":
			at.hidden = true
		case "aria-hidden":
			at.hidden = at.hidden || string(val) == "true"
		case "href":
			at.href = val
		case "alt":
			at.alt = val
		case "class":
			at.class = val
		}
	}
	return at
}

// language returns the language that a class attribute names with a language- or
// lang- prefix (as highlight.js and Markdown renderers write them), or "".
func language(class []byte) string {
	for _, c := range bytes.Fields(class) {
		for _, p := range []string{"language-", "lang-"} {
			if l, ok := bytes.CutPrefix(c, []byte(p)); ok && len(l) > 0 && !bytes.ContainsAny(l, "`~") {
				return string(l)
			}
		}
	}
	return ""
}

// dropped reports whether an element a is dropped with its content: see Convert.
func (c *converter) dropped(a atom.Atom, hidden bool) bool {
	switch a {
	case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Svg, atom.Iframe,
		atom.Object, atom.Canvas, atom.Math, atom.Nav, atom.Select, atom.Button,
		atom.Textarea, atom.Dialog:
		return true
	case atom.Header, atom.Footer:
		return c.content == 0 || hidden
	}
	return hidden
}

// void reports the elements without content or end tag.
func void(a atom.Atom) bool {
	switch a {
	case atom.Area, atom.Base, atom.Br, atom.Col, atom.Embed, atom.Hr, atom.Img, atom.Input,
		atom.Link, atom.Meta, atom.Source, atom.Track, atom.Wbr:
		return true
	}
	return false
}

// block reports the elements that Convert separates from what surrounds them by a
// blank line.
func block(a atom.Atom) bool {
	switch a {
	case atom.P, atom.Div, atom.Section, atom.Header, atom.Footer, atom.Aside,
		atom.Blockquote, atom.Table, atom.Caption, atom.Figure, atom.Figcaption,
		atom.Form, atom.Fieldset, atom.Details, atom.Summary, atom.Address, atom.Hr,
		atom.Dl, atom.Dt, atom.Dd, atom.Body:
		return true
	}
	return false
}

// headingLevel returns 1 to 6 for h1 to h6.
func headingLevel(a atom.Atom) int {
	return int(a.String()[1] - '0')
}

// skip tracks an element being dropped with its content. Its zero value skips
// nothing.
type skip struct {
	name  string // of the element being skipped, when depth > 0
	depth int    // how deep in elements of that name
}

// start starts skipping the element whose start tag, name, was just read.
func (s *skip) start(name []byte) { s.name, s.depth = string(name), 1 }

// active reports whether an element is being skipped.
func (s *skip) active() bool { return s.depth > 0 }

// token reports whether a tag of type tt and name is inside the element being
// skipped, and so to be skipped itself; the end tag that closes the element is, and
// it ends the skipping. Elements of the same name nested in the skipped one are
// counted so that the right end tag ends it.
func (s *skip) token(tt html.TokenType, name []byte) bool {
	if s.depth == 0 {
		return false
	}
	if string(name) == s.name {
		switch tt {
		case html.StartTagToken:
			s.depth++
		case html.EndTagToken:
			s.depth--
		}
	}
	return true
}
