package attachment_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/threadwright/threadwright/internal/attachment"
	"github.com/threadwright/threadwright/testkit/samplefiles"
	"golang.org/x/text/encoding/charmap"
)

func read(t *testing.T, name, mimeType string, data []byte, lim attachment.Limits) attachment.File {
	t.Helper()
	f, err := attachment.Read(context.Background(), name, mimeType, data, lim)
	if err != nil {
		t.Fatalf("Read(%s): %v", name, err)
	}
	return f
}

// Text-like files are read as text, with their format named; legacy character sets
// are decoded.
func TestReadText(t *testing.T) {
	cp1251, _ := charmap.Windows1251.NewEncoder().String("Привет, мир")
	cases := []struct {
		name, mime, data, format, want string
	}{
		{"notes.txt", "text/plain", "hello\nworld", "text", "hello\nworld"},
		{"README.md", "text/markdown", "# Title\n\n- item", "markdown", "# Title\n\n- item"},
		{"table.csv", "text/csv", "a,b\n1,2\n", "csv", "a,b\n1,2\n"},
		{"data.json", "application/json", `{"k": [1, 2]}`, "json", `{"k": [1, 2]}`},
		{"main.go", "", "package main\n", "code", "package main\n"},
		{"unknown", "application/octet-stream", "just words", "text", "just words"},
		{"ru.txt", "text/plain; charset=windows-1251", cp1251, "text", "Привет, мир"},
		{"bom.txt", "text/plain", "\ufeffwith a BOM", "text", "with a BOM"},
		{"page.html", "text/html", "<html><title>T</title><body><p>Hello <b>there</b></p><script>x()</script></body></html>", "html", "# T\n\nHello there"},
	}
	for _, c := range cases {
		f := read(t, c.name, c.mime, []byte(c.data), attachment.Limits{})
		if f.Kind != attachment.KindText || f.Format != c.format || f.Text != c.want || f.Cut {
			t.Errorf("%s: got %s/%s %q cut=%v, want text/%s %q", c.name, f.Kind, f.Format, f.Text, f.Cut, c.format, c.want)
		}
	}
}

func TestReadTextCut(t *testing.T) {
	f := read(t, "long.txt", "text/plain", []byte(strings.Repeat("ж", 100)), attachment.Limits{MaxChars: 10})
	if f.Text != strings.Repeat("ж", 10) || !f.Cut {
		t.Fatalf("got %q cut=%v, want 10 runes, cut", f.Text, f.Cut)
	}
}

func TestReadUnsupported(t *testing.T) {
	for name, data := range map[string][]byte{
		"archive.zip": []byte("PK\x03\x04\x14\x00\x00\x00binary\x00\x00"),
		"prog.exe":    []byte("MZ\x90\x00\x03\x00\x00\x00"),
	} {
		_, err := attachment.Read(context.Background(), name, "", data, attachment.Limits{})
		if !errors.Is(err, attachment.ErrUnsupported) {
			t.Errorf("%s: err = %v, want ErrUnsupported", name, err)
		}
	}
}

// A PDF's text is read page by page, compressed or not, up to the page bound.
func TestReadPDF(t *testing.T) {
	for _, compress := range []bool{false, true} {
		data := samplefiles.PDF(compress, "Quarterly report\nRevenue grew 12%", "Second page (draft)")
		f := read(t, "report.pdf", "application/pdf", data, attachment.Limits{})
		if f.Format != "pdf" || f.Pages != 2 || f.PagesRead != 2 || f.Cut {
			t.Fatalf("compress=%v: got %+v", compress, f)
		}
		for _, want := range []string{"Quarterly report", "Revenue grew 12%", "Second page (draft)"} {
			if !strings.Contains(f.Text, want) {
				t.Errorf("compress=%v: text %q lacks %q", compress, f.Text, want)
			}
		}
	}
}

func TestReadPDFPageBound(t *testing.T) {
	pages := make([]string, 12)
	for i := range pages {
		pages[i] = "page-" + string(rune('a'+i))
	}
	f := read(t, "long.pdf", "", samplefiles.PDF(true, pages...), attachment.Limits{MaxPages: 3})
	if f.Pages != 12 || f.PagesRead != 3 || !f.Cut {
		t.Fatalf("got pages %d read %d cut %v, want 12, 3, cut", f.Pages, f.PagesRead, f.Cut)
	}
	if !strings.Contains(f.Text, "page-c") || strings.Contains(f.Text, "page-d") {
		t.Fatalf("text %q: want pages a to c only", f.Text)
	}
}

func TestReadPDFCharBound(t *testing.T) {
	f := read(t, "wide.pdf", "", samplefiles.PDF(true, strings.Repeat("word ", 1000)), attachment.Limits{MaxChars: 50})
	if !f.Cut || len([]rune(f.Text)) > 50 {
		t.Fatalf("got %d runes cut=%v, want at most 50, cut", len([]rune(f.Text)), f.Cut)
	}
}

// A PDF whose content stream inflates without end stops at the deadline, with an
// error, instead of reading on.
func TestReadPDFDeadline(t *testing.T) {
	// 1 MiB of spaces in one content stream: no text, so only the deadline stops it.
	data := samplefiles.PDF(true, strings.Repeat(" ", 1<<20))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := attachment.Read(ctx, "bomb.pdf", "", data, attachment.Limits{})
	if !errors.Is(err, attachment.ErrUnreadable) {
		t.Fatalf("err = %v, want ErrUnreadable", err)
	}
}

func TestReadPDFMalformed(t *testing.T) {
	data := samplefiles.PDF(false, "text")
	_, err := attachment.Read(context.Background(), "bad.pdf", "", data[:len(data)/2], attachment.Limits{})
	if !errors.Is(err, attachment.ErrUnreadable) {
		t.Fatalf("err = %v, want ErrUnreadable", err)
	}
}

func TestReadDOCX(t *testing.T) {
	data := samplefiles.DOCX("Project brief", "Goal:\tship files", "Owner: <Ana> & Co")
	f := read(t, "brief.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", data, attachment.Limits{})
	want := "Project brief\nGoal:\tship files\nOwner: <Ana> & Co"
	if f.Format != "docx" || f.Text != want || f.Cut {
		t.Fatalf("got %s %q cut=%v, want %q", f.Format, f.Text, f.Cut, want)
	}
}

// A zip bomb in a DOCX is read only up to the XML byte bound, and its text only up
// to the character bound.
func TestReadDOCXBomb(t *testing.T) {
	data := samplefiles.DOCXBomb(8 << 20) // 8 MiB inflated
	if len(data) > 1<<20 {
		t.Fatalf("the bomb is %d bytes compressed; the test wants a small one", len(data))
	}
	f := read(t, "bomb.docx", "", data, attachment.Limits{MaxXMLBytes: 1 << 20, MaxChars: 1 << 30})
	if !f.Cut || len(f.Text) > 1<<20 || len(f.Text) < 1<<19 {
		t.Fatalf("got %d bytes of text cut=%v, want at most the 1 MiB bound, cut", len(f.Text), f.Cut)
	}
}

func TestReadImages(t *testing.T) {
	cases := []struct {
		name, format string
		data         []byte
	}{
		{"shot.png", "png", samplefiles.PNG(64, 48)},
		{"photo.jpg", "jpeg", samplefiles.JPEG(64, 48)},
		{"anim.gif", "gif", samplefiles.GIF(64, 48)},
		{"pic.webp", "webp", samplefiles.WebPHeader(64, 48)},
	}
	for _, c := range cases {
		f := read(t, c.name, "", c.data, attachment.Limits{})
		if f.Kind != attachment.KindImage || f.Format != c.format || f.Width != 64 || f.Height != 48 ||
			f.MIME != "image/"+c.format || len(f.Data) != len(c.data) {
			t.Errorf("%s: got %s %s %dx%d %s", c.name, f.Kind, f.Format, f.Width, f.Height, f.MIME)
		}
	}
}

// The pixel bound refuses an image by its header, before any pixel is decoded: a
// 16384×16384 WebP header is 30 bytes.
func TestReadImagePixelBound(t *testing.T) {
	_, err := attachment.Read(context.Background(), "huge.webp", "", samplefiles.WebPHeader(16384, 16384), attachment.Limits{})
	if !errors.Is(err, attachment.ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	_, err = attachment.Read(context.Background(), "big.png", "", samplefiles.PNG(100, 100), attachment.Limits{MaxImage: 100})
	if !errors.Is(err, attachment.ErrTooLarge) {
		t.Fatalf("byte bound: err = %v, want ErrTooLarge", err)
	}
}

// Reading honours the time bound: a timeout of a nanosecond fails a large PDF.
func TestReadTimeout(t *testing.T) {
	data := samplefiles.PDF(true, strings.Repeat("x ", 1<<17))
	_, err := attachment.Read(context.Background(), "slow.pdf", "", data, attachment.Limits{Timeout: time.Nanosecond})
	if !errors.Is(err, attachment.ErrUnreadable) {
		t.Fatalf("err = %v, want ErrUnreadable", err)
	}
}
