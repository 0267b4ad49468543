// Package attachment reads the files people attach to a thread as what a model can
// take: text, or an image with its dimensions (docs/architecture.md, "Files").
//
// Read sorts a file by its bytes first (a PDF's "%PDF-", a zip's "PK", an image's
// header), then by its MIME type and name, and reads it:
//
//   - text-like files (plain text, Markdown, CSV, JSON, YAML, XML, logs, source code)
//     as text, their character set detected as a web page's is
//     (htmltext.Decode: a byte order mark, a charset parameter, else UTF-8 or
//     Windows-1252); HTML is made readable text (htmltext.Convert);
//   - PDF text with github.com/ledongthuc/pdf, the maintained fork of rsc.io/pdf:
//     pure Go (no cgo, no poppler), small, and streaming a page's content through
//     its own decompressors, so Read can stop it at a bound; Read walks the pages
//     itself (pdf.Interpret), at most Limits.MaxPages of them, and stops at the
//     character bound or the deadline; it does so in a reader process of its own
//     (isolate.go), bounded in address space (Limits.MaxMemory) and stack, as a
//     hostile PDF can make the parser overflow its stack or ask for terabytes, which
//     end a Go process rather than panic;
//   - DOCX text from word/document.xml with archive/zip and encoding/xml of the
//     standard library: a DOCX is a zip of XML parts and its text is the w:t runs of
//     that one part, so no dependency is needed; the part is inflated as a stream
//     under Limits.MaxXMLBytes, so a zip bomb costs at most that many bytes of
//     reading and no memory beyond the text kept, and its elements may nest at most
//     maxXMLDepth deep;
//   - PNG, JPEG, GIF and WebP (golang.org/x/image/webp) images by their header
//     only (image.DecodeConfig: no pixel is decoded), refused above Limits.MaxPixels.
//
// Work on a file is bounded in bytes (the caller's download bound and the bounds
// here), characters, pages, pixels and time: Read stops at ctx's deadline even
// inside a PDF's content stream, whose bytes it reads through a reader that checks
// ctx. A parser's panic on a malformed file is an error wrapping ErrUnreadable, as is
// a PDF reader's end.
// Read never keeps the file's bytes, except an image's, which the model is sent.
package attachment
