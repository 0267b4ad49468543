package web

import (
	"context"
	"strings"

	"github.com/threadwright/threadwright/conversation"
)

// SourceFetcher reads the pages of a workflow's fetch artifacts (the sources phase,
// docs/workflows.md, "Pipelines"): the same fetch as the fetch_url tool (FetchURLTool), with
// the same FetchConfig: its address guard (FETCH_ALLOW_HOSTS), FETCH_MAX_BYTES,
// FETCH_TIMEOUT, redirects and MaxChars. Use NewSourceFetcher.
type SourceFetcher struct {
	f *fetcher
}

var _ conversation.SourceFetcher = (*SourceFetcher)(nil)

// NewSourceFetcher returns the fetcher of pages configured by cfg (see FetchConfig;
// unusable AllowHosts entries are ignored, as FetchURLTool ignores them).
func NewSourceFetcher(cfg FetchConfig) *SourceFetcher {
	return &SourceFetcher{f: newFetcher(cfg)}
}

// FetchSource fetches url and returns the URL read (after redirects), the page's
// title and its readable text (HTML as Markdown-like text, see FetchURLTool), at most
// FetchConfig.MaxChars characters, ending with a note when it was cut. Errors are
// fetch_url's: a refused address wraps ErrAddressRefused; an HTTP status, a content
// type it does not read, a timeout, ctx's end.
func (s *SourceFetcher) FetchSource(ctx context.Context, url string) (conversation.SourcePage, error) {
	p, err := s.f.fetch(ctx, url)
	if err != nil {
		return conversation.SourcePage{}, err
	}
	text := cutText(p.text, s.f.maxChars)
	if text != p.text || p.convertCut || p.bytesCut {
		text += "\n\n[cut: the page is longer than this]"
	}
	return conversation.SourcePage{URL: p.final.Redacted(), Title: strings.Join(strings.Fields(p.title), " "), Text: text}, nil
}
