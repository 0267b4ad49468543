// Package mrkdwn writes what the assistant answers as Slack shows it: it converts the
// Markdown a model writes to Slack's mrkdwn (FromMarkdown: emphasis, links, headings,
// lists, tables as aligned code blocks within bounds, and every &, < and > escaped so
// that a model cannot ping a channel), and it matches the [n] citation markers of an
// answer to the sources the turn's tools returned (Cite), listed at the answer's end
// (Sources, SourcesMarkdown; docs/tools.md, "Citations").
//
// Its functions are pure: text in, text out, no model call. The Synthesizer of
// package agents uses them to write the reply; cmd/threadwright gives FromMarkdown to
// package conversation to show workflow artifacts in cards.
package mrkdwn
