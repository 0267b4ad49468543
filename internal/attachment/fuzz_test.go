package attachment_test

import (
	"context"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/threadwright/threadwright/internal/attachment"
	"github.com/threadwright/threadwright/testkit/samplefiles"
)

// FuzzRead feeds Read arbitrary bytes under every name it sorts by: it must not
// panic, must keep to its bounds, and must return valid UTF-8 text.
func FuzzRead(f *testing.F) {
	f.Add("a.pdf", samplefiles.PDF(true, "hello", "world"))
	f.Add("a.pdf", samplefiles.PDF(false, "plain"))
	f.Add("a.docx", samplefiles.DOCX("one", "two\tthree"))
	f.Add("a.png", samplefiles.PNG(4, 4))
	f.Add("a.gif", samplefiles.GIF(4, 4))
	f.Add("a.jpg", samplefiles.JPEG(4, 4))
	f.Add("a.webp", samplefiles.WebPHeader(4, 4))
	f.Add("a.csv", []byte("a,b\n1,2"))
	f.Add("a.html", []byte("<p>hi</p>"))
	lim := attachment.Limits{MaxChars: 1000, MaxPages: 5, MaxPixels: 1 << 20, MaxXMLBytes: 1 << 20, Timeout: 5 * time.Second} // a PDF reader takes about 0.2 s to start under -race
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		file, err := attachment.Read(context.Background(), name, "", data, lim)
		if err != nil {
			return
		}
		if !utf8.ValidString(file.Text) {
			t.Fatalf("invalid UTF-8 text %q", file.Text)
		}
		if n := utf8.RuneCountInString(file.Text); n > lim.MaxChars {
			t.Fatalf("%d runes, more than %d", n, lim.MaxChars)
		}
		if file.PagesRead > lim.MaxPages {
			t.Fatalf("%d pages read, more than %d", file.PagesRead, lim.MaxPages)
		}
		if file.Kind == attachment.KindImage && int64(file.Width)*int64(file.Height) > lim.MaxPixels {
			t.Fatalf("image %dx%d over the pixel bound", file.Width, file.Height)
		}
	})
}
