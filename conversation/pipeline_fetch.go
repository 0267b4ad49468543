package conversation

import (
	"context"
)

// The sources phase (README.md, "Pipelines"): an auto artifact with fetch is written
// by no model. Each of its items is the readable text of the http(s) URLs found in its
// fetch dependency's text (the same item of it, with foreach: itemRequest), fetched
// by Config.Fetcher, a few at once. A failed fetch is recorded in the text, never
// fatal: the item still succeeds.

// SourceFetcher fetches a web page for the sources phase: its readable text
// (implemented by agents, with fetch_url's address guard and limits). Errors say why
// the page could not be read ("HTTP 500", an address refused, a timeout); they are
// recorded in the artifact's text, scrubbed and on one line.
type SourceFetcher interface {
	FetchSource(ctx context.Context, url string) (SourcePage, error)
}

// SourcePage is a fetched page: the URL fetched, the page's title ("" when it has
// none) and its readable text. (Source, a task's source, is another thing.)
type SourcePage struct {
	URL, Title, Text string
}
