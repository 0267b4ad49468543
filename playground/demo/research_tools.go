package demo

import (
	"encoding/json"
	"regexp"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/agents"
)

// Research with the search tools: a Write that offers commit_artifact_final_text with
// web_search and/or search_knowledge (tool_choice "required" or "auto") first calls
// the search tools, with queries from its item (or every item of a batch) and its
// topic, or from the recovery agent's "Search for:" list; the next request, which
// carries their results, commits notes that cite them. The demo reads this from the
// request alone: a request with "tool" messages has its results.

// webSearchTool is the name of web.SearchTool (package agents/web).
const webSearchTool = "web_search"

// searchTools are the tools the demo researches with, in the order it calls them.
var searchTools = []string{webSearchTool, searchKnowledgeTool}

// maxSearchItems bounds the items of a batch the demo searches for.
const maxSearchItems = 8

// keyWords drops the short and common words of a query, for the knowledge base's
// word search.
func keyWords(q string) string {
	var keep []string
	for _, w := range wordRe.FindAllString(strings.ToLower(q), -1) {
		if !queryStopWords[w] && len(keep) < 8 {
			keep = append(keep, w)
		}
	}
	if len(keep) == 0 {
		return q
	}
	return strings.Join(keep, " ")
}

// bulletsUnder returns the "- " lines right after the line marker in text.
func bulletsUnder(text, marker string) []string {
	_, rest, ok := strings.Cut(text, marker)
	if !ok {
		return nil
	}
	var out []string
	for _, l := range strings.Split(strings.TrimLeft(rest, " \n"), "\n") {
		m := bullet.FindStringSubmatch(l)
		if m == nil {
			break
		}
		out = append(out, strings.TrimSpace(m[1]))
	}
	return out
}

// searchResult is one result of a search tool: what it says, where it is from, and
// the query that found it.
type searchResult struct {
	Title, URL, Text, Query string
}

var (
	// webResultRe reads a web_search result: "n. title", "   url", "   snippet".
	webResultRe = regexp.MustCompile(`(?m)^\d+\. (.+)\n   (https?://\S+)(?:\n   (.+))?`)
	// passagesRe reads a search_knowledge passage: "[n] source — heading", its text.
	passagesRe = regexp.MustCompile(`(?m)^\[\d+\] (.+)\n((?:.+\n?)+)`)
)

// searchResults reads the results of the search calls in msgs: every tool message
// that answers a web_search or search_knowledge call, in order.
func searchResults(msgs []openai.ChatCompletionMessage) []searchResult {
	calls := map[string]openai.ToolCall{}
	var out []searchResult
	for _, m := range msgs {
		for _, tc := range m.ToolCalls {
			calls[tc.ID] = tc
		}
		if m.Role != openai.ChatMessageRoleTool {
			continue
		}
		tc, ok := calls[m.ToolCallID]
		if !ok {
			continue
		}
		var args struct {
			Query string `json:"query"`
		}
		_ = json.Unmarshal([]byte(tc.Function.Arguments), &args)
		body := strings.TrimSpace(agents.ToolOutputBody(messageText(m)))
		if strings.HasPrefix(body, "error:") {
			continue
		}
		switch tc.Function.Name {
		case webSearchTool:
			for _, r := range webResultRe.FindAllStringSubmatch(body, -1) {
				out = append(out, searchResult{Title: oneLine(r[1]), URL: r[2], Text: oneLine(strings.TrimSuffix(r[3], " …")), Query: args.Query})
			}
		case searchKnowledgeTool:
			for _, r := range passagesRe.FindAllStringSubmatch(body, -1) {
				src := oneLine(r[1])
				out = append(out, searchResult{Title: src, URL: src, Text: oneLine(r[2]), Query: args.Query})
			}
		}
	}
	return out
}

// maxFoundNotes bounds the notes made from search results.
const maxFoundNotes = 4

// foundNotes writes research notes from search results, under a line that says so.
func foundNotes(notes []researchNote) string {
	var b strings.Builder
	b.WriteString("_Offline demo notes from the search results: each note is the first sentence of a result, unchecked; read the source before using it._\n")
	for _, n := range notes {
		b.WriteString("\n" + n.line())
	}
	return b.String()
}
