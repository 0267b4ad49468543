package attachment

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/threadwright/threadwright/internal/htmltext"
	"github.com/threadwright/threadwright/internal/textcut"
)

// Defaults of Limits.
const (
	DefaultMaxChars    = 40_000
	DefaultMaxPages    = 50
	DefaultMaxPixels   = 40_000_000       // 40 megapixels: an 8K screenshot is 33
	DefaultMaxImage    = 20 << 20         // 20 MiB, the largest image OpenAI's chat completions take
	DefaultMaxXMLBytes = 16 << 20         // 16 MiB of a DOCX's document.xml, inflated: 40,000 characters take far less
	DefaultTimeout     = 20 * time.Second // reading one file, after its download
	DefaultMaxMemory   = 512 << 20        // 512 MiB of address space for a PDF's reader
)

// Limits bounds the work on one file. The zero value uses the defaults above.
type Limits struct {
	// MaxChars bounds the text kept, in characters (runes); longer text is cut and
	// File.Cut set.
	MaxChars int
	// MaxPages bounds the pages of a PDF read; later pages are not read, and
	// File.Cut is set.
	MaxPages int
	// MaxPixels bounds an image's width × height; a larger image is refused
	// (ErrTooLarge).
	MaxPixels int64
	// MaxImage bounds an image's bytes; a larger image is refused (ErrTooLarge).
	MaxImage int64
	// MaxXMLBytes bounds the inflated bytes of a DOCX's word/document.xml read; the
	// text ends there and File.Cut is set.
	MaxXMLBytes int64
	// Timeout bounds Read when ctx has no earlier deadline.
	Timeout time.Duration
	// MaxMemory bounds, in bytes, the address space a PDF's reader process may take
	// beyond what it holds when it starts; past it, the reader ends and Read answers
	// ErrUnreadable (isolate.go).
	MaxMemory int64
}

func (l Limits) withDefaults() Limits {
	def := func(v *int64, d int64) {
		if *v <= 0 {
			*v = d
		}
	}
	if l.MaxChars <= 0 {
		l.MaxChars = DefaultMaxChars
	}
	if l.MaxPages <= 0 {
		l.MaxPages = DefaultMaxPages
	}
	def(&l.MaxPixels, DefaultMaxPixels)
	def(&l.MaxImage, DefaultMaxImage)
	def(&l.MaxXMLBytes, DefaultMaxXMLBytes)
	def(&l.MaxMemory, DefaultMaxMemory)
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	return l
}

// Errors of Read; test with errors.Is.
var (
	// ErrUnsupported: the file is of a kind Read does not read (an archive, a
	// spreadsheet, a binary, audio, video).
	ErrUnsupported = errors.New("attachment: unsupported file type")
	// ErrTooLarge: an image over Limits.MaxPixels or Limits.MaxImage.
	ErrTooLarge = errors.New("attachment: file too large")
	// ErrUnreadable: a file of a kind Read reads that is malformed, encrypted, or
	// was not read within the time bound.
	ErrUnreadable = errors.New("attachment: file unreadable")
)

// Kind is what a model is given of a file.
type Kind string

// Kinds of File.
const (
	KindText  Kind = "text"
	KindImage Kind = "image"
)

// File is what Read made of a file.
type File struct {
	Kind Kind
	// Format names what the file was read as: "text", "markdown", "csv", "json",
	// "html", "code", "pdf", "docx", or an image format ("png", "jpeg", "gif", "webp").
	Format string
	// Text is a text file's content, as UTF-8 (KindText).
	Text string
	// Cut reports that Text stops early: a bound on characters, pages or bytes.
	Cut bool
	// Pages is a PDF's page count, and PagesRead how many were read.
	Pages, PagesRead int
	// Width and Height are an image's, in pixels (KindImage).
	Width, Height int
	// MIME is an image's MIME type ("image/png"), for its data URL.
	MIME string
	// Data is an image's bytes (KindImage); nil for text.
	Data []byte
}

// Read reads data, a file named name whose MIME type Slack or the sender gave as
// mimeType ("" when unknown), within lim and ctx's deadline (or lim.Timeout): a PDF
// in a reader process of its own (isolate.go), the rest here. The error wraps
// ErrUnsupported, ErrTooLarge or ErrUnreadable, with the reason; a parser's panic is
// ErrUnreadable.
func Read(ctx context.Context, name, mimeType string, data []byte, lim Limits) (f File, err error) {
	defer func() {
		if p := recover(); p != nil {
			f, err = File{}, fmt.Errorf("%w: malformed file: %v", ErrUnreadable, p)
		}
	}()
	lim = lim.withDefaults()
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()
	mediaType, _, _ := mime.ParseMediaType(mimeType)
	ext := strings.ToLower(strings.TrimPrefix(path.Ext(name), "."))
	switch {
	case bytes.HasPrefix(data, []byte("%PDF-")):
		return readPDFApart(ctx, data, lim)
	case bytes.HasPrefix(data, []byte("PK\x03\x04")) && (ext == "docx" || strings.Contains(mediaType, "wordprocessingml")):
		return readDOCX(ctx, data, lim)
	}
	if f, ok, err := readImage(data, lim); ok {
		return f, err
	}
	format, ok := textFormat(mediaType, ext, data)
	if !ok {
		return File{}, fmt.Errorf("%w: %s", ErrUnsupported, describe(mediaType, ext))
	}
	text := htmltext.Decode(data, mimeType, format == "html", false)
	cut := false
	if format == "html" {
		d := htmltext.Convert(text, htmltext.Options{TitleHeading: true, MaxBytes: 4 * lim.MaxChars})
		text, cut = d.Text, d.Cut
	}
	if n := textcut.Index(text, lim.MaxChars); n < len(text) {
		text, cut = text[:n], true
	}
	return File{Kind: KindText, Format: format, Text: text, Cut: cut}, nil
}

// textExt maps file name extensions to the text format they hold.
var textExt = map[string]string{
	"txt": "text", "text": "text", "log": "text", "md": "markdown", "markdown": "markdown",
	"csv": "csv", "tsv": "csv", "json": "json", "jsonl": "json", "ndjson": "json",
	"yaml": "text", "yml": "text", "toml": "text", "ini": "text", "cfg": "text", "conf": "text",
	"xml": "text", "html": "html", "htm": "html", "rst": "text", "adoc": "text", "tex": "text",
	"go": "code", "py": "code", "js": "code", "ts": "code", "tsx": "code", "jsx": "code",
	"java": "code", "kt": "code", "c": "code", "h": "code", "cc": "code", "cpp": "code",
	"hpp": "code", "cs": "code", "rs": "code", "rb": "code", "php": "code", "swift": "code",
	"scala": "code", "sh": "code", "bash": "code", "zsh": "code", "ps1": "code", "sql": "code",
	"proto": "code", "graphql": "code", "tf": "code", "lua": "code", "r": "code", "diff": "code",
	"patch": "code", "css": "code", "scss": "code", "vue": "code", "dockerfile": "code", "mk": "code",
}

// textFormat decides whether a file is text, and which: by its MIME type, its
// extension, and, when neither says, by its first bytes (no NUL, mostly printable).
func textFormat(mediaType, ext string, data []byte) (string, bool) {
	switch mediaType {
	case "text/markdown", "text/x-markdown":
		return "markdown", true
	case "text/csv", "text/tab-separated-values":
		return "csv", true
	case "text/html", "application/xhtml+xml":
		return "html", true
	case "application/json", "application/x-ndjson", "application/xml", "application/yaml",
		"application/x-yaml", "application/javascript", "application/x-sh", "application/sql", "application/toml":
		if f, ok := textExt[ext]; ok {
			return f, true
		}
		return "json", mediaType == "application/json" || looksText(data)
	}
	if f, ok := textExt[ext]; ok && looksText(data) {
		return f, true
	}
	if strings.HasPrefix(mediaType, "text/") || mediaType == "" || mediaType == "application/octet-stream" {
		if looksText(data) {
			return "text", true
		}
	}
	return "", false
}

// looksText reports whether the first 8 KiB of data look like text: no NUL byte
// outside a UTF-16 byte order mark's file, and what http.DetectContentType calls
// text.
func looksText(data []byte) bool {
	head := textcut.Bytes(data, 8<<10) // a cut splits no character
	if bytes.HasPrefix(head, []byte{0xFE, 0xFF}) || bytes.HasPrefix(head, []byte{0xFF, 0xFE}) {
		return true // UTF-16 with its byte order mark
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return false
	}
	if utf8.Valid(head) {
		return true
	}
	return strings.HasPrefix(http.DetectContentType(head), "text/")
}

func describe(mediaType, ext string) string {
	switch {
	case mediaType != "" && ext != "":
		return mediaType + " (." + ext + ")"
	case mediaType != "":
		return mediaType
	case ext != "":
		return "." + ext
	}
	return "unknown type"
}
