package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/conversation"
)

// Defaults of SearchConfig.
const (
	DefaultSearchTimeout = 15 * time.Second
	DefaultSearchLimit   = 5
)

// The search providers (SearchConfig.Provider).
const (
	ProviderSearXNG = "searxng"
	ProviderBrave   = "brave"
	ProviderTavily  = "tavily"
)

// SearchConfig configures the web_search tool (SearchTool) and its provider
// (docs/tools.md, "Web search").
type SearchConfig struct {
	// Provider names the search service: ProviderSearXNG, ProviderBrave or
	// ProviderTavily; empty picks the first configured of SearxngURL, BraveAPIKey and
	// TavilyAPIKey.
	Provider string
	// SearxngURL is the base URL of a SearXNG instance whose JSON API is enabled
	// ("json" in search.formats of its settings.yml), e.g. "https://searx.corp.example"
	// or "http://searxng:8080/searx"; a URL ending in "/search" is used as it is. The
	// instance is chosen by the operator, so it may be on a private address.
	SearxngURL string
	// BraveAPIKey is a Brave Search API subscription token (X-Subscription-Token).
	BraveAPIKey string
	// TavilyAPIKey is a Tavily API key ("tvly-…", sent as a bearer token).
	TavilyAPIKey string
	// Endpoint replaces a hosted provider's URL (a proxy, or a test server):
	// DefaultBraveEndpoint or DefaultTavilyEndpoint when empty.
	Endpoint string
	// Timeout bounds one search; default DefaultSearchTimeout, 15 s.
	Timeout time.Duration
	// Limit is the number of results returned; default DefaultSearchLimit, 5.
	Limit int
}

// SearchTool returns the web_search tool, {"query": "…"}, which searches the web
// through the configured provider (search_provider.go) and lists the first
// cfg.Limit results, numbered, each with its title, URL and snippet. ok is false
// when no provider is configured: leave the tool out of the registry then. A
// misconfigured provider (a SearxngURL that is not an absolute http(s) URL, a
// Provider whose key is missing) gives a tool whose runs fail saying so.
func SearchTool(cfg SearchConfig) (spec agents.ToolSpec, tool agents.Tool, ok bool) {
	prov, err := newProvider(cfg)
	if prov == nil && err == nil {
		return agents.ToolSpec{}, nil, false
	}
	s := &searcher{provider: prov, err: err, timeout: cfg.Timeout, limit: cfg.Limit}
	if s.timeout <= 0 {
		s.timeout = DefaultSearchTimeout
	}
	if s.limit <= 0 {
		s.limit = DefaultSearchLimit
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	s.client = &http.Client{Transport: transport}
	spec = agents.ToolSpec{
		Name: "web_search",
		Description: "Search the web. Returns numbered results, each with a title, URL and snippet; " +
			"read a result in full with fetch_url.",
		Category: Category,
		Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string",` +
			`"description":"the search query, as you would type it into a search engine"}},"required":["query"]}`),
		Timeout:  s.timeout + 5*time.Second,
		ReadOnly: true, Untrusted: true, // titles and snippets anyone may have written
	}
	return spec, agents.ToolFunc(s.run), true
}

// searcher runs web_search.
type searcher struct {
	provider searchProvider
	err      error // of a misconfigured provider
	client   *http.Client
	timeout  time.Duration
	limit    int
}

// maxSearchResponse bounds the bytes of a provider's answer read.
const maxSearchResponse = 4 << 20

// maxSnippet bounds a result's snippet, in characters.
const maxSnippet = 400

func (s *searcher) run(ctx context.Context, raw json.RawMessage) (string, error) {
	if s.err != nil {
		return "", s.err
	}
	var args struct {
		Query string `json:"query"`
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return "", fmt.Errorf("invalid arguments: %w", err)
	}
	query := strings.Join(strings.Fields(args.Query), " ")
	switch {
	case query == "":
		return "", errors.New("web_search needs a non-empty query")
	case utf8.RuneCountInString(query) > 500:
		return "", errors.New("web_search query longer than 500 characters")
	}

	ctx, cancel := context.WithTimeoutCause(ctx, s.timeout, errSearchTimeout)
	defer cancel()
	req, err := s.provider.request(ctx, query, s.limit)
	if err != nil {
		return "", fmt.Errorf("web_search: %w", err)
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return "", s.explain(ctx, err)
	}
	defer resp.Body.Close()
	if err := s.provider.status(resp.StatusCode); err != nil {
		return "", err
	}
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		return "", errors.New("web_search: the search service is rate limiting; try again later")
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return "", fmt.Errorf("web_search: the search service answered HTTP %s", resp.Status)
	}
	answer, err := s.provider.decode(io.LimitReader(resp.Body, maxSearchResponse))
	if err != nil {
		if ctx.Err() != nil {
			return "", s.explain(ctx, err)
		}
		return "", fmt.Errorf("web_search: unreadable answer from the search service: %w", err)
	}
	agents.ReportEntities(ctx, searchEntities(answer, s.limit)...) // agents/contract.go
	return formatSearch(query, answer, s.limit), nil
}

// searchEntities returns the results formatSearch lists, as the session context's
// entities: id the URL, title the result's title, type "web result".
func searchEntities(answer searchAnswer, limit int) []conversation.Entity {
	var out []conversation.Entity
	for _, r := range answer.Results {
		link := strings.TrimSpace(r.URL)
		if link == "" {
			continue
		}
		if len(out) == limit {
			break
		}
		out = append(out, conversation.Entity{ID: link, Title: strings.Join(strings.Fields(r.Title), " "), Type: "web result"})
	}
	return out
}

var errSearchTimeout = errors.New("search timeout")

// explain turns a failed search request into the error the model reads.
func (s *searcher) explain(ctx context.Context, err error) error {
	switch {
	case context.Cause(ctx) == errSearchTimeout:
		return fmt.Errorf("web_search: the search service did not answer within %s", s.timeout)
	case ctx.Err() != nil:
		return fmt.Errorf("web_search: %w", ctx.Err()) // the run was abandoned
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	return fmt.Errorf("web_search: the search service is unreachable: %w", err)
}

// formatSearch lists up to limit results of answer, numbered.
func formatSearch(query string, answer searchAnswer, limit int) string {
	var b strings.Builder
	for _, text := range answer.Answers {
		if text = strings.Join(strings.Fields(text), " "); text != "" {
			fmt.Fprintf(&b, "Answer: %s\n", text)
		}
	}
	n := 0
	for _, r := range answer.Results {
		link := strings.TrimSpace(r.URL)
		if link == "" {
			continue
		}
		if n == limit {
			break
		}
		n++
		if n == 1 {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			fmt.Fprintf(&b, "Results for %q:\n", query)
		}
		title := strings.Join(strings.Fields(r.Title), " ")
		if title == "" {
			title = link
		}
		fmt.Fprintf(&b, "\n%d. %s\n   %s\n", n, title, link)
		if snippet := strings.Join(strings.Fields(r.Snippet), " "); snippet != "" {
			if cut := cutText(snippet, maxSnippet); cut != snippet {
				snippet = cut + " …"
			}
			fmt.Fprintf(&b, "   %s\n", snippet)
		}
	}
	if n == 0 {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "No results for %q.", query)
	}
	return strings.TrimRight(b.String(), "\n")
}
