package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// The hosted providers' endpoints (docs/tools.md, "Web search").
const (
	// DefaultBraveEndpoint is Brave Search API's web search: GET ?q=…&count=N with
	// the X-Subscription-Token header; results in web.results[] (title, url,
	// description).
	DefaultBraveEndpoint = "https://api.search.brave.com/res/v1/web/search"
	// DefaultTavilyEndpoint is Tavily's search: POST {"query", "max_results"} with
	// "Authorization: Bearer <key>"; results in results[] (title, url, content) and
	// a short answer in answer.
	DefaultTavilyEndpoint = "https://api.tavily.com/search"
)

// searchAnswer is a provider's answer, as web_search lists it.
type searchAnswer struct {
	Answers []string
	Results []searchResult
}

// searchResult is one result of a search.
type searchResult struct {
	Title, URL, Snippet string
}

// searchProvider is one search service's API: the request of a query, the meaning
// of its refusals, and the reading of its JSON answer.
type searchProvider interface {
	request(ctx context.Context, query string, limit int) (*http.Request, error)
	// status returns the error of an HTTP status the provider gives a meaning of
	// its own (an API key refused), or nil.
	status(code int) error
	decode(r io.Reader) (searchAnswer, error)
}

// newProvider returns cfg's provider: nil, nil when none is configured; an error
// when cfg names one it does not configure.
func newProvider(cfg SearchConfig) (searchProvider, error) {
	name := strings.ToLower(strings.TrimSpace(cfg.Provider))
	base := strings.TrimSpace(cfg.SearxngURL)
	if name == "" {
		switch {
		case base != "":
			name = ProviderSearXNG
		case cfg.BraveAPIKey != "":
			name = ProviderBrave
		case cfg.TavilyAPIKey != "":
			name = ProviderTavily
		default:
			return nil, nil
		}
	}
	switch name {
	case ProviderSearXNG:
		if base == "" {
			return nil, errors.New("web_search is misconfigured: the provider is SearXNG, but no SearXNG URL is set")
		}
		endpoint, err := searchEndpoint(base)
		return searxng{endpoint: endpoint}, err
	case ProviderBrave:
		endpoint, err := hostedEndpoint(cfg.Endpoint, DefaultBraveEndpoint, cfg.BraveAPIKey, "Brave Search")
		return brave{endpoint: endpoint, key: cfg.BraveAPIKey}, err
	case ProviderTavily:
		endpoint, err := hostedEndpoint(cfg.Endpoint, DefaultTavilyEndpoint, cfg.TavilyAPIKey, "Tavily")
		return tavily{endpoint: endpoint, key: cfg.TavilyAPIKey}, err
	}
	return nil, fmt.Errorf("web_search is misconfigured: unknown provider %q (want %s, %s or %s)", cfg.Provider, ProviderSearXNG, ProviderBrave, ProviderTavily)
}

// hostedEndpoint returns a hosted provider's endpoint (set, or def) once its key is
// there.
func hostedEndpoint(set, def, key, name string) (*url.URL, error) {
	if strings.TrimSpace(key) == "" {
		return nil, fmt.Errorf("web_search is misconfigured: the provider is %s, but its API key is not set", name)
	}
	raw := strings.TrimSpace(set)
	if raw == "" {
		raw = def
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("web_search is misconfigured: the %s endpoint is not an absolute http(s) URL", name)
	}
	return u, nil
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

// searxng is a SearXNG instance's JSON API: GET <base>/search?q=…&format=json, as
// in https://docs.searxng.org/dev/search_api.
type searxng struct{ endpoint *url.URL }

func (p searxng) request(ctx context.Context, query string, _ int) (*http.Request, error) {
	u := *p.endpoint
	u.RawQuery = url.Values{"q": {query}, "format": {"json"}}.Encode()
	return http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
}

func (searxng) status(code int) error {
	if code == http.StatusForbidden {
		return errors.New("web_search: the SearXNG instance refused the JSON format (HTTP 403); " +
			"its settings.yml must list json in search.formats")
	}
	return nil
}

func (searxng) decode(r io.Reader) (searchAnswer, error) {
	var a struct {
		Results []struct {
			Title   string `json:"title"`
			URL     string `json:"url"`
			Content string `json:"content"`
		} `json:"results"`
		// Answers are strings in older SearXNG versions, objects with "answer" in newer.
		Answers []json.RawMessage `json:"answers"`
	}
	if err := json.NewDecoder(r).Decode(&a); err != nil {
		return searchAnswer{}, err
	}
	var out searchAnswer
	for _, raw := range a.Answers {
		var text string
		if json.Unmarshal(raw, &text) != nil {
			var obj struct {
				Answer string `json:"answer"`
			}
			_ = json.Unmarshal(raw, &obj)
			text = obj.Answer
		}
		out.Answers = append(out.Answers, text)
	}
	for _, res := range a.Results {
		out.Results = append(out.Results, searchResult{Title: res.Title, URL: res.URL, Snippet: res.Content})
	}
	return out, nil
}

// keyRefused is the error of a hosted provider that refused its API key.
func keyRefused(name string, code int) error {
	if code == http.StatusUnauthorized || code == http.StatusForbidden {
		return fmt.Errorf("web_search: %s refused the API key (HTTP %d); the operator must check it", name, code)
	}
	return nil
}

// brave is the Brave Search API.
type brave struct {
	endpoint *url.URL
	key      string
}

func (p brave) request(ctx context.Context, query string, limit int) (*http.Request, error) {
	u := *p.endpoint
	u.RawQuery = url.Values{"q": {query}, "count": {strconv.Itoa(limit)}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("X-Subscription-Token", p.key)
	return req, nil
}

func (brave) status(code int) error { return keyRefused("Brave Search", code) }

func (brave) decode(r io.Reader) (searchAnswer, error) {
	var a struct {
		Web struct {
			Results []struct {
				Title       string `json:"title"`
				URL         string `json:"url"`
				Description string `json:"description"`
			} `json:"results"`
		} `json:"web"`
	}
	if err := json.NewDecoder(r).Decode(&a); err != nil {
		return searchAnswer{}, err
	}
	var out searchAnswer
	for _, res := range a.Web.Results {
		// Brave marks the query's words in snippets with <strong>.
		out.Results = append(out.Results, searchResult{Title: stripTags(res.Title), URL: res.URL, Snippet: stripTags(res.Description)})
	}
	return out, nil
}

// stripTags removes the emphasis tags a hosted provider puts in titles and
// snippets.
func stripTags(s string) string {
	return tagReplacer.Replace(s)
}

var tagReplacer = strings.NewReplacer("<strong>", "", "</strong>", "", "<b>", "", "</b>", "", "<em>", "", "</em>", "")

// tavily is Tavily's search API.
type tavily struct {
	endpoint *url.URL
	key      string
}

func (p tavily) request(ctx context.Context, query string, limit int) (*http.Request, error) {
	body, err := json.Marshal(map[string]any{"query": query, "max_results": limit, "include_answer": true})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.endpoint.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+p.key)
	return req, nil
}

func (tavily) status(code int) error { return keyRefused("Tavily", code) }

func (tavily) decode(r io.Reader) (searchAnswer, error) {
	var a struct {
		Answer  string `json:"answer"`
		Results []struct {
			Title   string `json:"title"`
			URL     string `json:"url"`
			Content string `json:"content"`
		} `json:"results"`
	}
	if err := json.NewDecoder(r).Decode(&a); err != nil {
		return searchAnswer{}, err
	}
	out := searchAnswer{}
	if a.Answer != "" {
		out.Answers = []string{a.Answer}
	}
	for _, res := range a.Results {
		out.Results = append(out.Results, searchResult{Title: res.Title, URL: res.URL, Snippet: res.Content})
	}
	return out, nil
}
