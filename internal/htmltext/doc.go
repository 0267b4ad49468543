// Package htmltext holds what the HTML converters of threadwright share: the
// whitespace collapsing of text as a browser does it (Words), the elements that are
// never content (NonContent), and the tracking of an element being dropped with what
// it holds (Skip). The converters themselves, fetch_url's text in package agents and
// the Markdown for ingest in package knowledge, write their own output on top.
package htmltext
