package attachment

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ledongthuc/pdf"
)

// errStop ends pdf.Interpret from its callback: the text is full or ctx is done.
var errStop = errors.New("attachment: stop reading")

// errPDFTooLong is a PDF not read by the deadline, in its reader or waiting for one.
var errPDFTooLong = fmt.Errorf("%w: reading the PDF took too long", ErrUnreadable)

// readPDF reads the text of a PDF's first lim.MaxPages pages, with
// github.com/ledongthuc/pdf. Every byte the parser reads goes through ctxReaderAt,
// so a content stream that inflates without end stops at ctx's deadline; the text
// kept stops at lim.MaxChars.
func readPDF(ctx context.Context, data []byte, lim Limits) (f File, err error) {
	defer func() {
		if p := recover(); p != nil {
			f, err = File{}, fmt.Errorf("%w: malformed PDF: %v", ErrUnreadable, p)
		}
		if err == nil && ctx.Err() != nil {
			f, err = File{}, errPDFTooLong
		}
	}()
	r, err := pdf.NewReader(ctxReaderAt{ctx: ctx, r: bytes.NewReader(data)}, int64(len(data)))
	if err != nil {
		if ctx.Err() != nil {
			return File{}, errPDFTooLong
		}
		return File{}, fmt.Errorf("%w: %v", ErrUnreadable, err)
	}
	pages := r.NumPage()
	if pages < 0 {
		return File{}, fmt.Errorf("%w: a PDF with %d pages", ErrUnreadable, pages)
	}
	f = File{Kind: KindText, Format: "pdf", Pages: pages}
	w := textWriter{max: lim.MaxChars}
	for i := 1; i <= min(pages, lim.MaxPages) && !w.full(); i++ {
		if i > 1 {
			w.write("\n\n")
		}
		if err := pageText(ctx, r.Page(i), &w); err != nil {
			return File{}, err
		}
		f.PagesRead = i
	}
	f.Text = strings.TrimSpace(w.b.String())
	f.Cut = w.cut || f.PagesRead < pages
	return f, nil
}

// pageText writes the text a page shows (its Tj, TJ, ' and " operators, decoded
// with the font set by Tf), a new line for each text object (BT) and line move (T*).
// A malformed page stops it with a panic, which readPDF recovers.
func pageText(ctx context.Context, p pdf.Page, w *textWriter) (err error) {
	if p.V.IsNull() || p.V.Key("Contents").Kind() == pdf.Null {
		return nil
	}
	defer func() {
		if v := recover(); v != nil && v != errStop { //nolint:errorlint // our own sentinel value
			panic(v)
		}
	}()
	var enc pdf.TextEncoding = nopEncoding{}
	show := func(v pdf.Value) {
		if v.Kind() == pdf.String {
			w.write(enc.Decode(v.RawString()))
		}
	}
	pdf.Interpret(p.V.Key("Contents"), func(stk *pdf.Stack, op string) {
		if w.full() || ctx.Err() != nil {
			panic(errStop)
		}
		n := stk.Len()
		args := make([]pdf.Value, n)
		for i := n - 1; i >= 0; i-- {
			args[i] = stk.Pop()
		}
		switch op {
		case "BT", "T*":
			w.write("\n")
		case "Tf":
			if n == 2 {
				font := p.Font(args[0].Name())
				enc = font.Encoder()
			}
		case "'", "\"": // move to the next line and show text
			w.write("\n")
			fallthrough
		case "Tj":
			if n > 0 {
				show(args[n-1])
			}
		case "TJ":
			if n > 0 {
				for i := range args[0].Len() {
					show(args[0].Index(i))
				}
			}
		}
	})
	return nil
}

// nopEncoding reads a string's bytes as they are, before a font is set.
type nopEncoding struct{}

func (nopEncoding) Decode(raw string) string { return raw }

// ctxReaderAt reads from r until ctx is done.
type ctxReaderAt struct {
	ctx context.Context
	r   *bytes.Reader
}

func (c ctxReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.ReadAt(p, off)
}

// textWriter keeps text up to max runes.
type textWriter struct {
	b   strings.Builder
	n   int // runes written
	max int
	cut bool
}

func (w *textWriter) full() bool { return w.cut }

func (w *textWriter) write(s string) {
	if w.cut {
		return
	}
	for _, r := range s {
		if w.n >= w.max {
			w.cut = true
			return
		}
		w.b.WriteRune(r)
		w.n++
	}
}
