package knowledge

import "errors"

// MaxFileSize is the largest file Ingest reads, in bytes; a larger one is skipped.
const MaxFileSize = 10 << 20

// Extensions are the file name extensions Ingest reads, lowercase, and the format
// each names.
var Extensions = map[string]Format{
	".md": Markdown, ".markdown": Markdown,
	".txt":  Text,
	".html": HTML, ".htm": HTML,
}

// Format is the format of a document: how Chunks reads it.
type Format int

// The formats of Extensions.
const (
	Markdown Format = iota + 1 // split by SplitMarkdown
	Text                       // split by SplitText
	HTML                       // converted by HTMLToMarkdown, then split by SplitMarkdown
)

// Errors of Chunks; the reasons Ingest skips a file.
var (
	// ErrUnsupported means the file's extension is not one of Extensions.
	ErrUnsupported = errors.New("knowledge: unsupported file type (want .md, .markdown, .txt, .html or .htm)")
	// ErrNotText means the file is not UTF-8 text: it has NUL bytes, as binary files
	// and UTF-16 text do, or bytes that are not UTF-8. Chunks's error wrapping it
	// says which, and where.
	ErrNotText = errors.New("knowledge: not text")
	// ErrTooMuchText means an HTML document's text would be larger than 4 bytes per
	// byte of HTML, as only hostile or broken markup makes it, or than twice
	// MaxFileSize: the document is skipped rather than stored cut short.
	ErrTooMuchText = errors.New("knowledge: HTML whose text would be too large")
)
