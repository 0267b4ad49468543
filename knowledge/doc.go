// Package knowledge fills the knowledge base (conversation.Knowledge) with documents:
// `threadwright ingest PATH...` calls Ingest, which walks files and directories, reads
// Markdown (.md, .markdown), plain text (.txt) and HTML (.html, .htm), splits each
// document into chunks and stores them with the store's ReplaceSource, one
// transaction per document. The search_knowledge tool (package agents) then searches
// the chunks with the database's full-text search.
//
// A chunk is a few paragraphs under one heading, at most about MaxChunkChars (1,200)
// characters: SplitMarkdown cuts a document at its headings, then between paragraphs,
// never inside a fenced code block unless the block alone is too large; SplitText
// cuts plain text between paragraphs; HTMLToMarkdown turns a page into Markdown first,
// keeping its headings and dropping scripts, styles, navigation and footers. A
// document is named by its path as given on the command line, cleaned and
// slash-separated, and versioned by the SHA-256 of its content, so that ingesting a
// directory again reads only what changed and replaces a changed document's chunks
// whole. A file that cannot be ingested (unreadable, not UTF-8 text, too large) is
// skipped with a reason in the Report; only the store's errors stop an ingest.
//
// The package depends on conversation only, for the Knowledge interface and the
// Chunk type, and on internal/htmltext, the HTML converter it shares with fetch_url.
package knowledge
