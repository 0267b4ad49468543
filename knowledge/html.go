package knowledge

import (
	"errors"
	"io"
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/threadwright/threadwright/internal/htmltext"
)

// HTMLToMarkdown returns the readable text of an HTML document as Markdown, for
// SplitMarkdown: headings (h1 to h6) become "#" to "######" headings, paragraphs and
// other blocks are separated by blank lines, list items start with "- " or "1. ",
// table cells are separated by " | ", preformatted text becomes a fenced code block
// (in the language its code's class names, as in class="language-go") and inline
// code is put in backticks; other markup is dropped and whitespace collapsed, as a
// browser does. Elements that are not content are dropped with what
// they hold: script, style, noscript, template, svg, iframe, object, nav and footer.
// The title (<title>) heads the text as "# Title" when the body has no h1. It reads
// the document with the golang.org/x/net/html tokenizer, which decodes character
// references and tolerates malformed markup; the error is r's, if any.
func HTMLToMarkdown(r io.Reader) (string, error) {
	z := html.NewTokenizer(r)
	var (
		w      mdWriter
		title  string
		skip   htmltext.Skip // the dropped element being skipped
		pre    *strings.Builder
		lang   string // the language of pre's code, from its class language-…
		lists  []int  // per open list: 0 for ul, else the next number of ol
		cell   int    // cells so far in the table row
		hasH1  bool
		inCode int
	)
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			if err := z.Err(); !errors.Is(err, io.EOF) {
				return "", err
			}
			out := strings.TrimSpace(w.b.String())
			if title = strings.Join(strings.Fields(title), " "); title != "" && !hasH1 {
				out = strings.TrimSpace("# " + title + "\n\n" + out)
			}
			return out, nil

		case html.TextToken:
			switch {
			case skip.Skipping():
			case pre != nil:
				pre.Write(z.Text())
			default:
				w.text(string(z.Text()))
			}

		case html.StartTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			if skip.Token(tt, string(name)) {
				continue
			}
			if dropped(a) {
				if tt == html.StartTagToken {
					skip.Start(string(name))
				}
				continue
			}
			if pre != nil {
				switch {
				case a == atom.Br:
					pre.WriteByte('\n')
				case a == atom.Code && strings.TrimSpace(pre.String()) == "":
					lang = language(z)
				}
				continue
			}
			switch a {
			case atom.Title:
				if tt == html.StartTagToken && z.Next() == html.TextToken {
					title = string(z.Text())
				}
			case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
				if tt == html.SelfClosingTagToken {
					continue
				}
				level := int(name[1] - '0')
				hasH1 = hasH1 || level == 1
				w.paragraph()
				w.prefix = strings.Repeat("#", level) + " "
			case atom.Pre:
				w.paragraph()
				pre, lang = new(strings.Builder), ""
			case atom.Ul, atom.Ol:
				n := 0
				if a == atom.Ol {
					n = 1
				}
				lists = append(lists, n)
				w.line()
			case atom.Li:
				w.line()
				indent := strings.Repeat("  ", max(len(lists)-1, 0))
				if k := len(lists) - 1; k >= 0 && lists[k] > 0 {
					w.prefix = indent + strconv.Itoa(lists[k]) + ". "
					lists[k]++
				} else {
					w.prefix = indent + "- "
				}
			case atom.Tr:
				w.line()
				cell = 0
			case atom.Td, atom.Th:
				if cell > 0 {
					w.space = true
					w.word("|")
					w.space = true
				}
				cell++
			case atom.Br:
				w.line()
			case atom.Code, atom.Kbd, atom.Samp:
				if tt == html.StartTagToken {
					inCode++
					w.word("`")
					w.glue = true
				}
			default:
				if blocks[a] {
					w.paragraph()
				}
			}

		case html.EndTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			if skip.Token(tt, string(name)) {
				continue
			}
			switch {
			case a == atom.Pre && pre != nil:
				w.fenced(pre.String(), lang)
				pre = nil
			case pre != nil:
			case a == atom.Ul || a == atom.Ol:
				if len(lists) > 0 {
					lists = lists[:len(lists)-1]
				}
				w.line()
			case a == atom.Li || a == atom.Tr:
				w.prefix = ""
				w.line()
			case a == atom.Code || a == atom.Kbd || a == atom.Samp:
				if inCode > 0 {
					inCode--
					w.glue = true
					w.word("`")
				}
			case isHeading(a):
				w.prefix = ""
				w.paragraph()
			case blocks[a]:
				w.paragraph()
			}
		}
	}
}

// language returns the language that the class attribute of the tag z is at names
// with a language- or lang- prefix (as highlight.js and Markdown renderers write
// them), or "".
func language(z *html.Tokenizer) string {
	for {
		key, val, more := z.TagAttr()
		if string(key) == "class" {
			for _, c := range strings.Fields(string(val)) {
				for _, p := range []string{"language-", "lang-"} {
					if l, ok := strings.CutPrefix(c, p); ok && l != "" && !strings.ContainsAny(l, "`~") {
						return l
					}
				}
			}
		}
		if !more {
			return ""
		}
	}
}

// dropped reports the elements HTMLToMarkdown drops with their content: code,
// styling, media, navigation (htmltext.NonContent) and page furniture (footer).
func dropped(a atom.Atom) bool {
	return htmltext.NonContent(a) || a == atom.Footer
}

// blocks are the elements that HTMLToMarkdown separates from what surrounds them by
// a blank line.
var blocks = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Section: true, atom.Article: true, atom.Main: true,
	atom.Header: true, atom.Aside: true, atom.Blockquote: true, atom.Table: true,
	atom.Figure: true, atom.Figcaption: true, atom.Form: true, atom.Fieldset: true,
	atom.Details: true, atom.Summary: true, atom.Address: true, atom.Hr: true,
	atom.Dl: true, atom.Dt: true, atom.Dd: true, atom.Caption: true, atom.Body: true,
}

func isHeading(a atom.Atom) bool {
	switch a {
	case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
		return true
	}
	return false
}

// mdWriter writes Markdown text: words separated by single spaces, with the line
// breaks that blocks ask for written only before the next word, so that empty
// elements leave no blank lines.
type mdWriter struct {
	b strings.Builder
	// brk is the line breaks to write before the next word: 0, 1 or 2 (a blank line).
	brk int
	// prefix is written after the breaks, before the next word: a list marker or "## ".
	prefix string
	// space says a space separates the next word from the last.
	space bool
	// glue says the next word follows the last without a space (inside backticks).
	glue bool
}

// paragraph asks for a blank line before the next word.
func (w *mdWriter) paragraph() { w.brk = 2 }

// line asks for a line break before the next word.
func (w *mdWriter) line() { w.brk = max(w.brk, 1) }

// text writes s, its whitespace collapsed.
func (w *mdWriter) text(s string) { htmltext.Words(s, &w.space, w.word) }

// word writes s after the pending breaks and prefix, or a space.
func (w *mdWriter) word(s string) {
	switch {
	case w.brk > 0:
		if w.b.Len() > 0 {
			w.b.WriteString("\n\n"[:w.brk])
		}
		w.b.WriteString(w.prefix)
		w.brk, w.prefix = 0, ""
	case w.space && !w.glue && w.b.Len() > 0:
		w.b.WriteByte(' ')
	}
	w.space, w.glue = false, false
	w.b.WriteString(s)
}

// fenced writes code as a fenced code block in language lang (the info string, or
// ""), with a fence longer than any run of backticks in it.
func (w *mdWriter) fenced(code, lang string) {
	code = strings.TrimPrefix(code, "\n") // as a browser drops a newline right after <pre>
	code = strings.TrimRight(code, " \t\n")
	if strings.TrimSpace(code) == "" {
		return
	}
	marker := "```"
	for strings.Contains(code, marker) {
		marker += "`"
	}
	w.paragraph()
	w.word(marker + lang + "\n" + code + "\n" + marker)
	w.paragraph()
}
