package knowledge

import (
	"io"

	"github.com/threadwright/threadwright/internal/htmltext"
)

// maxMarkdown bounds the Markdown of an HTML document, in bytes: twice the largest
// file Ingest reads. htmltext.Convert also keeps it within 4 bytes per byte of HTML
// plus 1 KiB.
const maxMarkdown = 2 * MaxFileSize

// HTMLToMarkdown returns the readable text of an HTML document as Markdown, for
// SplitMarkdown, as htmltext.Convert writes it: headings (h1 to h6) become "#" to
// "######" headings, paragraphs and other blocks are separated by blank lines, list
// items start with "- " or "1. ", table cells are separated by " | ", preformatted
// text becomes a fenced code block (in the language its code's class names, as in
// class="language-go") and inline code is put in backticks; other markup is dropped
// and whitespace collapsed, as a browser does. What is not content is dropped with
// what it holds: scripts, styles, embedded media, navigation, form controls, hidden
// elements, and the page's header and footer (those outside article and main). The
// title (<title>) heads the text as "# Title" when the body has no h1; links are left
// out, their text kept. The error is r's, or ErrTooMuchText.
func HTMLToMarkdown(r io.Reader) (string, error) {
	doc, err := io.ReadAll(r)
	if err != nil {
		return "", err
	}
	return htmlToMarkdown(string(doc))
}

// htmlToMarkdown is HTMLToMarkdown of a document read.
func htmlToMarkdown(doc string) (string, error) {
	md := htmltext.Convert(doc, htmltext.Options{TitleHeading: true, MaxBytes: maxMarkdown})
	if md.Cut {
		return "", ErrTooMuchText
	}
	return md.Text, nil
}
