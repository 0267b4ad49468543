package web_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/agents/web"
)

// fakeBrave answers like Brave Search API's web search for the subscription token
// key: 401 for another token, and the query's results with <strong> marks.
func fakeBrave(t *testing.T, key string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/res/v1/web/search" {
			http.NotFound(w, r)
			return
		}
		if r.Header.Get("X-Subscription-Token") != key {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"type":"ErrorResponse","error":{"code":"SUBSCRIPTION_TOKEN_INVALID"}}`)
			return
		}
		q, count := r.URL.Query().Get("q"), r.URL.Query().Get("count")
		fmt.Fprintf(w, `{"type":"search","query":{"original":%q},"web":{"type":"search","results":[`+
			`{"title":"<strong>Go</strong> release notes","url":"https://go.dev/doc/devel/release","description":"count=%s: the <strong>%s</strong> history"},`+
			`{"title":"Second","url":"https://example.org/2","description":"two"}]}}`, q, count, q)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// fakeTavily answers like Tavily's POST /search for the bearer key.
func fakeTavily(t *testing.T, key string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/search" {
			http.NotFound(w, r)
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+key {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"detail":{"error":"Unauthorized: missing or invalid API key."}}`)
			return
		}
		var body struct {
			Query      string `json:"query"`
			MaxResults int    `json:"max_results"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, `{"query":%q,"answer":"It is %d.","results":[{"title":"Tavily result","url":"https://example.com/t","content":"about %s","score":0.9}],"response_time":0.5}`,
			body.Query, body.MaxResults, body.Query)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestHostedSearchProviders checks web_search through Brave Search and Tavily: the
// key sent as each expects, the results listed like SearXNG's, and a refused key
// explained.
func TestHostedSearchProviders(t *testing.T) {
	b := fakeBrave(t, "brave-key")
	got, err := runSearch(t, web.SearchConfig{BraveAPIKey: "brave-key", Endpoint: b.URL + "/res/v1/web/search", Limit: 3}, "go")
	want := "Results for \"go\":\n\n1. Go release notes\n   https://go.dev/doc/devel/release\n   count=3: the go history\n\n2. Second\n   https://example.org/2\n   two"
	if err != nil || got != want {
		t.Errorf("Brave: %v\n got %q\nwant %q", err, got, want)
	}
	if _, err := runSearch(t, web.SearchConfig{BraveAPIKey: "wrong", Endpoint: b.URL + "/res/v1/web/search"}, "go"); err == nil ||
		err.Error() != "web_search: Brave Search refused the API key (HTTP 401); the operator must check it" {
		t.Errorf("Brave with a wrong key: %v", err)
	}

	tv := fakeTavily(t, "tvly-key")
	got, err = runSearch(t, web.SearchConfig{TavilyAPIKey: "tvly-key", Endpoint: tv.URL + "/search", Limit: 2}, "kafka")
	want = "Answer: It is 2.\n\nResults for \"kafka\":\n\n1. Tavily result\n   https://example.com/t\n   about kafka"
	if err != nil || got != want {
		t.Errorf("Tavily: %v\n got %q\nwant %q", err, got, want)
	}
	if _, err := runSearch(t, web.SearchConfig{TavilyAPIKey: "nope", Endpoint: tv.URL + "/search"}, "kafka"); err == nil ||
		!strings.Contains(err.Error(), "Tavily refused the API key (HTTP 401)") {
		t.Errorf("Tavily with a wrong key: %v", err)
	}
}

// TestSearchProviderChoice checks which provider a configuration picks: the one
// named, else the first configured; none leaves web_search out; a named provider
// without its key or URL gives a tool that says so.
func TestSearchProviderChoice(t *testing.T) {
	b := fakeBrave(t, "k")
	tv := fakeTavily(t, "k")
	if _, _, ok := web.SearchTool(web.SearchConfig{}); ok {
		t.Error("web_search offered with no provider configured")
	}
	// Both keys, Tavily named: Tavily answers (its answer line shows it).
	got, err := runSearch(t, web.SearchConfig{Provider: "tavily", BraveAPIKey: "k", TavilyAPIKey: "k", Endpoint: tv.URL + "/search"}, "q")
	if err != nil || !strings.HasPrefix(got, "Answer: ") {
		t.Errorf("named Tavily: %q, %v", got, err)
	}
	// Both keys, none named: Brave comes first.
	got, err = runSearch(t, web.SearchConfig{BraveAPIKey: "k", TavilyAPIKey: "k", Endpoint: b.URL + "/res/v1/web/search"}, "q")
	if err != nil || !strings.Contains(got, "Go release notes") {
		t.Errorf("first configured: %q, %v", got, err)
	}
	for _, c := range []struct {
		cfg  web.SearchConfig
		want string
	}{
		{web.SearchConfig{Provider: "brave"}, "web_search is misconfigured: the provider is Brave Search, but its API key is not set"},
		{web.SearchConfig{Provider: "searxng", TavilyAPIKey: "k"}, "web_search is misconfigured: the provider is SearXNG, but no SearXNG URL is set"},
		{web.SearchConfig{Provider: "bing", BraveAPIKey: "k"}, `web_search is misconfigured: unknown provider "bing" (want searxng, brave or tavily)`},
	} {
		if _, err := runSearch(t, c.cfg, "q"); err == nil || err.Error() != c.want {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
}
