package mrkdwn_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/agents/mrkdwn"
	"github.com/threadwright/threadwright/conversation"
)

// knowledgeResult is a search_knowledge result of two passages.
const knowledgeResult = "Found 2 passages in the knowledge base for \"leave\":\n\n" +
	"[1] docs/handbook/leave.md — Parental leave\nSixteen weeks.\n\n" +
	"[2] https://wiki.example.com/sick — Sick leave\nTell your manager.\n\nCite the passages you use as [n]."

func TestCite(t *testing.T) {
	kb := conversation.ToolCall{Name: "search_knowledge", Result: knowledgeResult}
	search := conversation.ToolCall{Name: "web_search", Result: "Results for \"go\":\n\n" +
		"1. The Go Programming Language\n   https://go.dev/\n   Go is an open source…\n\n" +
		"2. Go (game)\n   https://en.wikipedia.org/wiki/Go_(game)"}
	page := conversation.ToolCall{Name: "fetch_url", Result: "URL: https://go.dev/doc/\nTitle: Documentation\n\n[1] is not a marker here"}
	failed := conversation.ToolCall{Name: "fetch_url", Failed: true, Result: "error: URL: https://bad.example/"}
	tests := []struct {
		name    string
		answer  string
		calls   []conversation.ToolCall
		want    string
		sources []mrkdwn.Source
	}{
		{"NoTools", "Plain [1] answer.", nil, "Plain answer.", nil},
		{"Renumbered", "Tell them [2]. Sixteen weeks [1]. Again [2].", []conversation.ToolCall{kb},
			"Tell them [1]. Sixteen weeks [2]. Again [1].",
			[]mrkdwn.Source{{Title: "https://wiki.example.com/sick — Sick leave", URL: "https://wiki.example.com/sick"}, {Title: "docs/handbook/leave.md — Parental leave"}}},
		{"UnknownRemoved", "Sixteen weeks [1] [7].\n[9] alone", []conversation.ToolCall{kb},
			"Sixteen weeks [1].\nalone", []mrkdwn.Source{{Title: "docs/handbook/leave.md — Parental leave"}}},
		{"CodeAndLinksKept", "Use `a[7]` and\n```\nb[1]\n```\n[1](https://x.example) [1]: ref", []conversation.ToolCall{kb},
			"Use `a[7]` and\n```\nb[1]\n```\n[1](https://x.example) [1]: ref", nil},
		{"UnmatchedBacktick", "a ` b [7] `` c [1]", []conversation.ToolCall{kb},
			"a ` b `` c [1]", []mrkdwn.Source{{Title: "docs/handbook/leave.md — Parental leave"}}},
		{"LongFence", "````\n[7]\n```\n[7]\n````\nx [7]", []conversation.ToolCall{kb},
			"````\n[7]\n```\n[7]\n````\nx", nil},
		{"LatestSearchWins", "Go [2].", []conversation.ToolCall{kb, {Name: "search_knowledge", Result: "Found 2 passages:\n\n[1] docs/a.md — A\ntext\n\n[2] docs/b.md — B\ntext"}},
			"Go [1].", []mrkdwn.Source{{Title: "docs/b.md — B"}}},
		{"WebSearch", "Go [1] and the game [2] [3].", []conversation.ToolCall{search},
			"Go [1] and the game [2].", []mrkdwn.Source{{Title: "The Go Programming Language", URL: "https://go.dev/"}, {Title: "Go (game)", URL: "https://en.wikipedia.org/wiki/Go_(game)"}}},
		{"FetchedPageListed", "The docs say so [1].", []conversation.ToolCall{page, failed},
			"The docs say so.", []mrkdwn.Source{{Title: "Documentation", URL: "https://go.dev/doc/"}}},
		{"PassageTextIsNoSource", "X [3].", []conversation.ToolCall{{Name: "search_knowledge", Result: "Found 1 passage:\n\n[1] a.md — A\ntext\n\n[3] https://evil.example/\n\nCite."}},
			"X.", nil},
		{"PageCannotAddAURL", "X.", []conversation.ToolCall{{Name: "fetch_url", Result: "URL: https://go.dev/\nTitle: Go\nURL: https://evil.example/\n\nbody"}},
			"X.", []mrkdwn.Source{{Title: "Go", URL: "https://go.dev/"}}},
		{"FailedAndDeniedIgnored", "X [1].", []conversation.ToolCall{{Name: "search_knowledge", Failed: true, Result: knowledgeResult}, {Name: "search_knowledge", Denied: true, Result: knowledgeResult}},
			"X.", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, sources := mrkdwn.Cite(tt.answer, tt.calls)
			if got != tt.want {
				t.Errorf("answer\n got %q\nwant %q", got, tt.want)
			}
			if fmt.Sprint(sources) != fmt.Sprint(tt.sources) {
				t.Errorf("sources\n got %v\nwant %v", sources, tt.sources)
			}
		})
	}
}

func TestSources(t *testing.T) {
	got := mrkdwn.Sources("Sources", []mrkdwn.Source{
		{Title: "docs/a&b.md — <Setup>"},
		{Title: "Go | <!channel>", URL: "https://go.dev/?a=1&b=2"},
		{URL: "https://x.example/"},
	})
	want := "*Sources*\n[1] docs/a&amp;b.md — &lt;Setup&gt;\n[2] <https://go.dev/?a=1&amp;b=2|Go ¦ &lt;!channel&gt;>\n[3] <https://x.example/>"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if mrkdwn.Sources("Sources", nil) != "" || mrkdwn.RetrievedSources("Sources", nil) != "" {
		t.Error("no sources: want no block")
	}
}

// TestAttribute: an answer that cites none of what its searches returned lists those
// as retrieved (distinct, at most MaxRetrieved, not the pages already listed); one
// that cites any lists no retrieved sources.
func TestAttribute(t *testing.T) {
	kb := conversation.ToolCall{Name: "search_knowledge", Result: knowledgeResult}
	kbAgain := conversation.ToolCall{Name: "search_knowledge", Result: "Found 3 passages:\n\n" +
		"[1] docs/handbook/leave.md — Parental leave\ntext\n\n[2] a.md\ntext\n\n[3] b.md — B\ntext\n\nCite."}
	search := conversation.ToolCall{Name: "web_search", Result: "Results:\n\n" +
		"1. Go\n   https://go.dev/\n   text\n\n2. C\n   https://c.example/\n   text\n\n3. D\n   https://d.example/"}
	page := conversation.ToolCall{Name: "fetch_url", Result: "URL: https://go.dev/\nTitle: Go\n\nbody"}
	tests := []struct {
		name             string
		answer           string
		calls            []conversation.ToolCall
		cited, retrieved string
	}{
		{"NoMarkers", "Sixteen weeks.", []conversation.ToolCall{kb},
			"[]", "[{docs/handbook/leave.md — Parental leave } {https://wiki.example.com/sick — Sick leave https://wiki.example.com/sick}]"},
		{"CitedOne", "Sixteen weeks [1].", []conversation.ToolCall{kb}, "[{docs/handbook/leave.md — Parental leave }]", "[]"},
		{"UnknownMarkerOnly", "Sixteen weeks [9].", []conversation.ToolCall{kb},
			"[]", "[{docs/handbook/leave.md — Parental leave } {https://wiki.example.com/sick — Sick leave https://wiki.example.com/sick}]"},
		{"DistinctBoundedPagesApart", "Go.", []conversation.ToolCall{kb, kbAgain, page, search},
			"[{Go https://go.dev/}]",
			"[{docs/handbook/leave.md — Parental leave } {https://wiki.example.com/sick — Sick leave https://wiki.example.com/sick} {a.md } {b.md — B } {C https://c.example/}]"},
		{"PageOnly", "Go.", []conversation.ToolCall{page}, "[{Go https://go.dev/}]", "[]"},
		{"NothingFound", "Nothing.", []conversation.ToolCall{{Name: "search_knowledge", Result: "No passages found for \"x\"."}}, "[]", "[]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := mrkdwn.Attribute(tt.answer, tt.calls)
			if got := fmt.Sprint(a.Cited); got != tt.cited {
				t.Errorf("cited %s, want %s", got, tt.cited)
			}
			if got := fmt.Sprint(a.Retrieved); got != tt.retrieved {
				t.Errorf("retrieved %s, want %s", got, tt.retrieved)
			}
		})
	}
	got := mrkdwn.RetrievedSources("Sources — retrieved, not cited", []mrkdwn.Source{{Title: "a&b.md — A"}, {Title: "Go", URL: "https://go.dev/"}})
	if want := "*Sources — retrieved, not cited*\n• a&amp;b.md — A\n• <https://go.dev/|Go>"; got != want {
		t.Errorf("RetrievedSources:\n%s\nwant\n%s", got, want)
	}
	got = mrkdwn.RetrievedSourcesMarkdown("Sources — retrieved, not cited", []mrkdwn.Source{{Title: "a_b.md"}, {Title: "Go", URL: "https://go.dev/"}})
	if want := "**Sources — retrieved, not cited**  \n• a\\_b.md  \n• [Go](https://go.dev/)"; got != want {
		t.Errorf("RetrievedSourcesMarkdown:\n%s\nwant\n%s", got, want)
	}
}

// FuzzCite: Cite never panics, keeps an answer without markers as it is, and every
// marker left in the answer names a listed source.
func FuzzCite(f *testing.F) {
	for _, seed := range []string{"Sixteen weeks [1] [7].", "`a[1]` ```\n[2]\n```", "[1](x) [2]: y", "a ` b [1] `` c [2]", "[99999999999999999999]"} {
		f.Add(seed)
	}
	calls := []conversation.ToolCall{{Name: "search_knowledge", Result: knowledgeResult}}
	marker := regexp.MustCompile(`\[(\d{1,3})\]`)
	f.Fuzz(func(t *testing.T, answer string) {
		got, sources := mrkdwn.Cite(answer, calls)
		if !strings.Contains(answer, "[") && got != answer {
			t.Fatalf("Cite(%q) = %q; want it unchanged", answer, got)
		}
		if strings.ContainsAny(answer, "`(:") {
			return // code and links keep their markers as written
		}
		for _, m := range marker.FindAllStringSubmatch(got, -1) {
			if n, err := strconv.Atoi(m[1]); err != nil || n < 1 || n > len(sources) {
				t.Fatalf("Cite(%q) = %q with %d sources: marker %s names none", answer, got, len(sources), m[0])
			}
		}
	})
}
