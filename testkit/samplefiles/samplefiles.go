// Package samplefiles makes the files that tests attach (PDF, DOCX, PNG, JPEG, GIF,
// WebP) from a few parameters, so that no test needs a binary blob in testdata. Each
// file is small and valid as its format's readers read it; the hostile variants (a
// DOCX whose document inflates past a bound, a PDF with many pages) are made the
// same way. No product code imports it (docs/architecture.md, "Packages").
package samplefiles

import (
	"archive/zip"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"strings"
)

// PDF returns a PDF 1.4 document with one page per element of pages, each page's
// text drawn in Helvetica, one line per "\n"-separated line. The content streams
// are FlateDecode-compressed when compress is set. Text may hold only characters
// of Latin-1 other than "(", ")" and "\\", which are escaped.
func PDF(compress bool, pages ...string) []byte {
	var objs []string // object n is objs[n-1]
	add := func(s string) int { objs = append(objs, s); return len(objs) }
	catalog := add("") // filled in below
	pagesObj := add("")
	font := add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	var kids []string
	for _, text := range pages {
		var content strings.Builder
		content.WriteString("BT /F1 12 Tf 14 TL 72 720 Td\n")
		for line := range strings.SplitSeq(text, "\n") {
			fmt.Fprintf(&content, "(%s) Tj T*\n", escapePDF(line))
		}
		content.WriteString("ET")
		stream, filter := []byte(content.String()), ""
		if compress {
			var z bytes.Buffer
			w := zlib.NewWriter(&z)
			w.Write(stream)
			w.Close()
			stream, filter = z.Bytes(), " /Filter /FlateDecode"
		}
		c := add(fmt.Sprintf("<< /Length %d%s >>\nstream\n%s\nendstream", len(stream), filter, stream))
		p := add(fmt.Sprintf("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] "+
			"/Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>", pagesObj, font, c))
		kids = append(kids, fmt.Sprintf("%d 0 R", p))
	}
	objs[catalog-1] = fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", pagesObj)
	objs[pagesObj-1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(kids))

	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, catalog, xref)
	return b.Bytes()
}

func escapePDF(s string) string {
	r := strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`)
	var b strings.Builder
	for _, c := range r.Replace(s) {
		if c < 256 {
			b.WriteByte(byte(c)) // WinAnsiEncoding agrees with Latin-1 on these
		} else {
			b.WriteByte('?')
		}
	}
	return b.String()
}

// DOCX returns a Word document (Office Open XML) with one paragraph per element of
// paragraphs: the parts Word needs to open it ([Content_Types].xml, _rels/.rels,
// word/document.xml). A "\t" in a paragraph becomes a <w:tab/>.
func DOCX(paragraphs ...string) []byte {
	var body strings.Builder
	for _, p := range paragraphs {
		body.WriteString("<w:p>")
		for i, part := range strings.Split(p, "\t") {
			if i > 0 {
				body.WriteString("<w:r><w:tab/></w:r>")
			}
			body.WriteString(`<w:r><w:t xml:space="preserve">`)
			body.WriteString(xmlEscape(part))
			body.WriteString("</w:t></w:r>")
		}
		body.WriteString("</w:p>")
	}
	return docxWith(body.String())
}

// DOCXBomb returns a DOCX whose word/document.xml inflates to about n bytes of
// repeated text from a zip entry of a few kilobytes per megabyte: a zip bomb for
// readers that would inflate the whole part.
func DOCXBomb(n int) []byte {
	para := "<w:p><w:r><w:t>" + strings.Repeat("A", 1000) + "</w:t></w:r></w:p>"
	return docxWith(strings.Repeat(para, max(n/len(para), 1)))
}

func docxWith(body string) []byte {
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	part := func(name, content string) {
		w, _ := z.Create(name) // Create on a bytes.Buffer fails only on a bad name
		w.Write([]byte(content))
	}
	part("[Content_Types].xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>`+
		`<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">`+
		`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>`+
		`<Default Extension="xml" ContentType="application/xml"/>`+
		`<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>`+
		`</Types>`)
	part("_rels/.rels", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>`+
		`<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">`+
		`<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>`+
		`</Relationships>`)
	part("word/document.xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>`+
		`<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>`+
		body+`</w:body></w:document>`)
	z.Close()
	return b.Bytes()
}

func xmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// PNG returns a w×h PNG image filled with a gradient.
func PNG(w, h int) []byte {
	var b bytes.Buffer
	png.Encode(&b, gradient(w, h)) // encoding to a buffer fails only on a zero-sized image
	return b.Bytes()
}

// JPEG returns a w×h JPEG image.
func JPEG(w, h int) []byte {
	var b bytes.Buffer
	jpeg.Encode(&b, gradient(w, h), nil)
	return b.Bytes()
}

// GIF returns a w×h GIF image.
func GIF(w, h int) []byte {
	var b bytes.Buffer
	gif.Encode(&b, gradient(w, h), nil)
	return b.Bytes()
}

// WebPHeader returns the header of a w×h lossless WebP image (a RIFF container with a
// VP8L chunk) without its pixel data: enough for image.DecodeConfig, not for a
// full decode. w and h are between 1 and 16384.
func WebPHeader(w, h int) []byte {
	var vp8l [5]byte
	vp8l[0] = 0x2f // the VP8L signature
	bits := uint32(w-1) | uint32(h-1)<<14
	binary.LittleEndian.PutUint32(vp8l[1:], bits)
	chunk := append([]byte("VP8L"), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(chunk[4:], uint32(len(vp8l)))
	chunk = append(chunk, vp8l[:]...)
	chunk = append(chunk, 0) // pad to an even size
	out := append([]byte("RIFF"), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(out[4:], uint32(4+len(chunk)))
	out = append(out, "WEBP"...)
	return append(out, chunk...)
}

func gradient(w, h int) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), 128, 255})
		}
	}
	return img
}

// RecursivePDF returns a PDF 1.5 document whose cross-reference stream puts object 1
// in object stream 1, itself: a parser that resolves it recurses without end (with
// github.com/ledongthuc/pdf, until the Go runtime ends the process for a stack
// overflow).
func RecursivePDF() []byte {
	return []byte("%PDF-1.5\n" +
		"2 0 obj\n<< /Type /XRef /Size 3 /W [1 1 1] /Root 1 0 R /Length 9 >>\nstream\n" +
		"\x00\x00\x00\x02\x01\x00\x00\x00\x00" + "\nendstream\nendobj\n" +
		"%" + strings.Repeat("x", 120) + "\nstartxref\n9\n%%EOF\n")
}

// HugeXrefPDF returns a PDF 1.4 document whose cross-reference table starts at object
// 10^12: a parser that sizes its table by it asks for terabytes (with
// github.com/ledongthuc/pdf, until the Go runtime ends the process, out of memory).
func HugeXrefPDF() []byte {
	pad := "%" + strings.Repeat("x", 200) + "\n"
	return []byte("%PDF-1.4\n" + pad + "xref\n1000000000000 1\n0000000000 00000 n \n" +
		"trailer\n<< /Size 1 >>\nstartxref\n" + fmt.Sprint(9+len(pad)) + "\n%%EOF\n")
}
