package attachment

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// wordML is the namespace of WordprocessingML's elements (ECMA-376 part 1, 17).
const wordML = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"

// maxXMLDepth bounds how deep word/document.xml's elements nest: encoding/xml keeps
// memory for each element open, and a document's text runs nest a dozen deep (tables
// in tables a few dozen), so a file past it is refused rather than read to the byte
// bound.
const maxXMLDepth = 256

// readDOCX reads the text of a DOCX's main part, word/document.xml: the w:t runs,
// a tab for w:tab, a line break for w:br and w:cr, and a new line after each
// paragraph (w:p). The part is inflated as a stream, at most lim.MaxXMLBytes.
func readDOCX(ctx context.Context, data []byte, lim Limits) (File, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return File{}, fmt.Errorf("%w: not a DOCX: %v", ErrUnreadable, err)
	}
	var part *zip.File
	for _, f := range zr.File {
		if f.Name == "word/document.xml" {
			part = f
			break
		}
	}
	if part == nil {
		return File{}, fmt.Errorf("%w: a zip without word/document.xml is no DOCX", ErrUnsupported)
	}
	rc, err := part.Open()
	if err != nil {
		return File{}, fmt.Errorf("%w: %v", ErrUnreadable, err)
	}
	defer rc.Close()
	in := &boundedReader{ctx: ctx, r: rc, left: lim.MaxXMLBytes}
	dec := xml.NewDecoder(in)
	dec.Strict = false
	w := textWriter{max: lim.MaxChars}
	inText, depth := false, 0
	for !w.full() {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if in.exhausted() {
				w.cut = true
				break
			}
			if ctx.Err() != nil {
				return File{}, fmt.Errorf("%w: reading the document took too long", ErrUnreadable)
			}
			return File{}, fmt.Errorf("%w: word/document.xml: %v", ErrUnreadable, err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if depth++; depth > maxXMLDepth {
				return File{}, fmt.Errorf("%w: word/document.xml's elements are nested too deeply (over %d)", ErrUnreadable, maxXMLDepth)
			}
			if t.Name.Space != wordML {
				continue
			}
			switch t.Name.Local {
			case "t":
				inText = true
			case "tab":
				w.write("\t")
			case "br", "cr":
				w.write("\n")
			}
		case xml.EndElement:
			depth--
			if t.Name.Space != wordML {
				continue
			}
			switch t.Name.Local {
			case "t":
				inText = false
			case "p":
				w.write("\n")
			}
		case xml.CharData:
			if inText {
				w.write(string(t))
			}
		}
	}
	return File{Kind: KindText, Format: "docx", Text: strings.TrimSpace(w.b.String()), Cut: w.cut}, nil
}

// errByteBound ends a boundedReader's stream at its bound.
var errByteBound = errors.New("attachment: byte bound reached")

// boundedReader reads at most left bytes of r, and nothing once ctx is done.
type boundedReader struct {
	ctx  context.Context
	r    io.Reader
	left int64
	hit  bool
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if err := b.ctx.Err(); err != nil {
		return 0, err
	}
	if b.left <= 0 {
		b.hit = true
		return 0, errByteBound
	}
	p = p[:min(int64(len(p)), b.left)]
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *boundedReader) exhausted() bool { return b.hit }
