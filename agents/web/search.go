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

// SearchConfig configures the web_search tool (SearchTool).
type SearchConfig struct {
	// SearxngURL is the base URL of a SearXNG instance whose JSON API is enabled
	// ("json" in search.formats of its settings.yml), e.g. "https://searx.corp.example"
	// or "http://searxng:8080/searx"; a URL ending in "/search" is used as it is. Empty
	// leaves web_search out. The instance is chosen by the operator, so it may be on a
	// private address.
	SearxngURL string
	// Timeout bounds one search; default DefaultSearchTimeout, 15 s.
	Timeout time.Duration
	// Limit is the number of results returned; default DefaultSearchLimit, 5.
	Limit int
}

// SearchTool returns the web_search tool, {"query": "…"}, which searches the web
// through a SearXNG instance's JSON API (GET <base>/search?q=…&format=json, as in
// https://docs.searxng.org/dev/search_api) and lists the first cfg.Limit results,
// numbered, each with its title, URL and snippet. ok is false when no provider is
// configured (cfg.SearxngURL is empty): leave the tool out of the registry then. A
// SearxngURL that is not an absolute http(s) URL gives a tool whose runs fail saying
// so.
func SearchTool(cfg SearchConfig) (spec agents.ToolSpec, tool agents.Tool, ok bool) {
	base := strings.TrimSpace(cfg.SearxngURL)
	if base == "" {
		return agents.ToolSpec{}, nil, false
	}
	s := &searcher{timeout: cfg.Timeout, limit: cfg.Limit}
	if s.timeout <= 0 {
		s.timeout = DefaultSearchTimeout
	}
	if s.limit <= 0 {
		s.limit = DefaultSearchLimit
	}
	s.endpoint, s.err = searchEndpoint(base)
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

// searchEndpoint returns the /search URL of a SearXNG base URL.
func searchEndpoint(base string) (*url.URL, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("web_search is misconfigured: the SearXNG URL %q is not an absolute http(s) URL", base)
	}
	u.RawQuery, u.Fragment = "", ""
	if !strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/search") {
		u = u.JoinPath("search")
	}
	return u, nil
}

// searcher runs web_search.
type searcher struct {
	endpoint *url.URL
	err      error // of a misconfigured endpoint
	client   *http.Client
	timeout  time.Duration
	limit    int
}

// maxSearchResponse bounds the bytes of a SearXNG answer read.
const maxSearchResponse = 4 << 20

// maxSnippet bounds a result's snippet, in characters.
const maxSnippet = 400

// searxngResponse is the part of SearXNG's JSON answer web_search reads.
type searxngResponse struct {
	Results []struct {
		Title   string `json:"title"`
		URL     string `json:"url"`
		Content string `json:"content"`
	} `json:"results"`
	// Answers are strings in older SearXNG versions, objects with "answer" in newer.
	Answers []json.RawMessage `json:"answers"`
}

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
	u := *s.endpoint
	u.RawQuery = url.Values{"q": {query}, "format": {"json"}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
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
	switch {
	case resp.StatusCode == http.StatusForbidden:
		return "", errors.New("web_search: the SearXNG instance refused the JSON format (HTTP 403); " +
			"its settings.yml must list json in search.formats")
	case resp.StatusCode == http.StatusTooManyRequests:
		return "", errors.New("web_search: the search service is rate limiting; try again later")
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return "", fmt.Errorf("web_search: the search service answered HTTP %s", resp.Status)
	}
	var answer searxngResponse
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxSearchResponse)).Decode(&answer); err != nil {
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
func searchEntities(answer searxngResponse, limit int) []conversation.Entity {
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
func formatSearch(query string, answer searxngResponse, limit int) string {
	var b strings.Builder
	for _, raw := range answer.Answers {
		var text string
		if json.Unmarshal(raw, &text) != nil {
			var obj struct {
				Answer string `json:"answer"`
			}
			_ = json.Unmarshal(raw, &obj)
			text = obj.Answer
		}
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
		if snippet := strings.Join(strings.Fields(r.Content), " "); snippet != "" {
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
