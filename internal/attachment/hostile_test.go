package attachment_test

import (
	"archive/zip"
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/threadwright/threadwright/internal/attachment"
	"github.com/threadwright/threadwright/testkit/samplefiles"
)

// flatePDF is a one-page PDF whose content stream is content, deflated.
func flatePDF(t *testing.T, content func(w *zlib.Writer)) []byte {
	t.Helper()
	var z bytes.Buffer
	zw, err := zlib.NewWriterLevel(&z, zlib.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	content(zw)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
		fmt.Sprintf("<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream", z.Len(), z.Bytes()),
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	var offs []int
	for i, o := range objs {
		offs = append(offs, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, o := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// TestReadHostilePDFs: PDFs that end the process of a parser that reads them (a stack
// overflow, an allocation of terabytes: neither is a panic recover catches) or grow
// its memory without bound are read in a reader process of their own: Read answers
// ErrUnreadable, and this process, which a test of them in it would have ended, goes
// on.
func TestReadHostilePDFs(t *testing.T) {
	cases := map[string][]byte{
		// Object 1 in object stream 1, itself: resolving it recurses without end.
		"ObjectStreamHoldsItself": samplefiles.RecursivePDF(),
		// A cross-reference table from object 10^12: it would take terabytes.
		"XrefStartsAtATrillion": samplefiles.HugeXrefPDF(),
		// 32 MiB of operands with no operator: the parser's operand stack grows
		// with them, tens of bytes for each (past MaxMemory below).
		"OperandsWithoutEnd": flatePDF(t, func(w *zlib.Writer) {
			w.Write([]byte("BT "))
			chunk := bytes.Repeat([]byte("0 "), 1<<19)
			for range 32 {
				w.Write(chunk)
			}
		}),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, err := attachment.Read(ctx, "hostile.pdf", "application/pdf", data, attachment.Limits{MaxMemory: 128 << 20, Timeout: time.Minute})
			if !errors.Is(err, attachment.ErrUnreadable) {
				t.Fatalf("Read = %v; want ErrUnreadable", err)
			}
			if ctx.Err() != nil {
				t.Fatalf("Read ended at the deadline (%v): the reader's bounds did not end it", err)
			}
			// The reader ran and was ended by its bounds (under -race, the race
			// runtime's own end: "too many address space collisions").
			if !strings.Contains(err.Error(), "the PDF reader stopped") ||
				!raceEnabled && !strings.Contains(err.Error(), "out of memory") && !strings.Contains(err.Error(), "stack") {
				t.Fatalf("Read = %v; want the reader ended by its memory or stack bound", err)
			}
		})
	}
}

// TestReadDOCXNestedWithoutEnd: a DOCX whose XML opens elements without end (each
// costs the XML decoder memory it keeps) is refused once it nests deeper than any
// document does, after a few KB, not read up to the byte bound.
func TestReadDOCXNestedWithoutEnd(t *testing.T) {
	var z bytes.Buffer
	zw := zip.NewWriter(&z)
	w, err := zw.Create("word/document.xml")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte(`<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>`))
	w.Write(bytes.Repeat([]byte("<a>"), 1<<20))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = attachment.Read(context.Background(), "deep.docx", "", z.Bytes(), attachment.Limits{})
	if !errors.Is(err, attachment.ErrUnreadable) || !strings.Contains(err.Error(), "nested") {
		t.Fatalf("Read = %v; want ErrUnreadable, nested too deeply", err)
	}
}
