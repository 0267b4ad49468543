// Package htmltext turns an HTML document into readable Markdown text: the one HTML
// converter of threadwright. fetch_url (package agents) shows a page to the model
// with it, links resolved against the page's URL; ingest (package knowledge) stores
// documents with it, the title made a heading.
//
// Convert reads the document once with the golang.org/x/net/html tokenizer, which
// decodes character references and tolerates malformed markup, and builds no tree:
// what it keeps of the open elements is a few counters and the list numbers of at
// most MaxListDepth levels. Its time and memory are linear in the input, however
// deeply the markup nests or however many tags are left unclosed, and its text is at
// most 4 bytes per byte of input plus 1 KiB, or less when the caller says so.
//
// Decode reads bytes in a legacy character set (windows-1251, Shift_JIS, UTF-16, …)
// as UTF-8 text, as the HTML standard determines a page's encoding: for fetched
// pages and for the files people attach (internal/attachment).
package htmltext
