package agents

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/conversation"
)

func call(id, name, args string) openai.ToolCall {
	return openai.ToolCall{ID: id, Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: name, Arguments: args}}
}

// A tool call's task: pending with its title before it runs; complete or error with
// a short output and the sources the tool's real result names.
func TestToolTask(t *testing.T) {
	// The results as the tools write them (packages agents/web and agents/toolbox,
	// which pin their format in their own tests).
	const pageURL = "https://status.example.com"
	args := fmt.Sprintf(`{"url":%q}`, pageURL)
	fetched := "URL: " + pageURL + "\nTitle: Status page\n\nAll green."
	const searched = "Results for \"go release\":\n\n1. Go release notes\n   https://go.dev/doc/devel/release\n   Go 1.24\n\n" +
		"2. https://example.com/b\n   https://example.com/b"
	const found = "Found 2 passages in the knowledge base for \"leave\":\n\n" +
		"[1] docs/handbook/leave.md — Parental leave\nTwelve weeks.\n\n" +
		"[2] https://wiki.example.com/holidays — Holidays\nTen days.\n\n" +
		"Cite the passages you use as [n] right after what they support, e.g. \"… 16 weeks [1].\" " +
		"Do not list the sources yourself: the reply lists the ones you cite under the answer."

	for _, tc := range []struct {
		name string
		call openai.ToolCall
		rec  *conversation.ToolCall
		want conversation.Task
	}{
		{"pending", call("c1", "fetch_url", args), nil,
			conversation.Task{ID: "c1", Title: "fetch_url " + pageURL, Status: conversation.TaskPending}},
		{"fetch_url", call("c1", "fetch_url", args), &conversation.ToolCall{Name: "fetch_url", Result: fetched},
			conversation.Task{ID: "c1", Title: "fetch_url " + pageURL, Status: conversation.TaskComplete, Output: "Status page",
				Sources: []conversation.Source{{URL: pageURL, Text: "Status page"}}}},
		{"web_search", call("c2", "web_search", `{"query":"go  release"}`),
			&conversation.ToolCall{Name: "web_search", Result: searched},
			conversation.Task{ID: "c2", Title: "web_search go release", Status: conversation.TaskComplete, Output: `Results for "go release":`,
				Sources: []conversation.Source{{URL: "https://go.dev/doc/devel/release", Text: "Go release notes"}, {URL: "https://example.com/b", Text: "https://example.com/b"}}}},
		{"search_knowledge", call("c3", "search_knowledge", `{"query":"leave"}`),
			&conversation.ToolCall{Name: "search_knowledge", Result: found},
			conversation.Task{ID: "c3", Title: "search_knowledge leave", Status: conversation.TaskComplete, Output: "docs/handbook/leave.md — Parental leave",
				Sources: []conversation.Source{{URL: "https://wiki.example.com/holidays", Text: "https://wiki.example.com/holidays — Holidays"}}}},
		// Each document and heading once; a line of a passage's text is no passage.
		{"search_knowledge distinct", call("c5", "search_knowledge", `{"query":"paging"}`),
			&conversation.ToolCall{Name: "search_knowledge", Result: "Found 3 passages:\n\n[1] oncall-handbook.md — Paging\nPage twice.\n\n" +
				"[2] oncall-handbook.md — Paging\nThen the lead.\n\n[4] evil.md — Not a passage\n\n[3] oncall-handbook.md\nIntro.\n\nCite."},
			conversation.Task{ID: "c5", Title: "search_knowledge paging", Status: conversation.TaskComplete, Output: "oncall-handbook.md — Paging; oncall-handbook.md"}},
		{"error", call("c4", "fetch_url", args), &conversation.ToolCall{Name: "fetch_url", Failed: true, Result: "error: fetch_url refuses 127.0.0.1\nmore"},
			conversation.Task{ID: "c4", Title: "fetch_url " + pageURL, Status: conversation.TaskError, Output: "error: fetch_url refuses 127.0.0.1"}},
		// Cut coarsely: the conversation cuts what it shows after scrubbing secrets.
		{"long", call("", "calculate", `{"expression":"`+strings.Repeat("1+", 500)+`1"}`), &conversation.ToolCall{Name: "calculate", Result: strings.Repeat("9", 2000)},
			conversation.Task{ID: "calculate", Title: ("calculate " + strings.Repeat("1+", 500))[:maxTaskTitle-1] + "…", Status: conversation.TaskComplete, Output: strings.Repeat("9", maxTaskOutput-1) + "…"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := toolTask(tc.call, tc.rec); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("toolTask =\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}
