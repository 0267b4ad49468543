package demo

import (
	"encoding/json"
	"fmt"
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

// searchFirst returns the search calls a research write makes before it commits, or
// nil: when fn is not commit_artifact_final_text, no search tool is offered, or the
// request already has tool results.
func searchFirst(req openai.ChatCompletionRequest, fn *openai.FunctionDefinition) []openai.ToolCall {
	if fn.Name != agents.CommitFinalTextTool {
		return nil
	}
	for _, m := range req.Messages {
		if m.Role == openai.ChatMessageRoleTool {
			return nil
		}
	}
	var offered []string
	for _, name := range searchTools {
		if findTool(req.Tools, name) != nil {
			offered = append(offered, name)
		}
	}
	if len(offered) == 0 {
		return nil
	}
	t := readTask(req, fn)
	if strings.HasPrefix(strings.TrimSpace(t.text), "Revise ") {
		return nil
	}
	var calls []openai.ToolCall
	for _, q := range t.searchQueries() {
		for _, name := range offered {
			query := q
			if name == searchKnowledgeTool {
				query = keyWords(q)
			}
			calls = append(calls, toolCall(len(req.Messages), len(calls)+1, name, marshal(map[string]string{"query": query})))
		}
	}
	return calls
}

// searchQueries are the queries of the research: the recovery agent's (the lines
// under "Search for:" in the instructions), else one per item (its title and the
// subject), else one for the artifact.
func (t *task) searchQueries() []string {
	if qs := bulletsUnder(quotedAfter(t.text, "The team's instructions:"), "Search for:"); len(qs) > 0 {
		return qs[:min(len(qs), 3)]
	}
	subject := t.subject()
	if len(t.batch) > 0 {
		var out []string
		for _, it := range t.batch[:min(len(t.batch), maxSearchItems)] {
			out = append(out, it.Title+" "+subject)
		}
		return out
	}
	if t.item != nil {
		return []string{t.item.Title + " " + subject}
	}
	return []string{subject + " " + orDefault(t.artifactTitle, "background")}
}

// subject is what the document is about, for a search query: the topic input, else
// the canned subject of a built-in workflow, else its title.
func (t *task) subject() string {
	switch {
	case t.topic != "" && !ownTopic(t.workflow, t.topic):
		return t.topic
	case t.workflow == blogWorkflow:
		return "async stand-ups small teams"
	case t.workflow == "Grant proposal":
		return "Millbrook community solar energy poverty tenants"
	case t.topic != "":
		return t.topic
	}
	return orDefault(t.workflow, "the document")
}

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

// resultsFor returns the results of the item headed title: those whose query names
// it, or all of them when the request is about that item alone.
func (t *task) resultsFor(title string) []searchResult {
	if len(t.batch) == 0 {
		return t.results
	}
	var out []searchResult
	for _, r := range t.results {
		if strings.HasPrefix(strings.ToLower(r.Query), strings.ToLower(title)) ||
			strings.HasPrefix(r.Query, keyWords(title)) {
			out = append(out, r)
		}
	}
	return out
}

// maxFoundNotes bounds the notes made from search results.
const maxFoundNotes = 4

// resultNotes are the notes of the request's item from its search results: a fact (the
// first sentence of a snippet or passage, else the result's title) and its source, at
// most maxFoundNotes, one per source.
func (t *task) resultNotes() []note {
	var out []note
	seen := map[string]bool{}
	for _, r := range t.resultsFor(t.itemTitle()) {
		if seen[r.URL] || len(out) == maxFoundNotes {
			continue
		}
		seen[r.URL] = true
		fact := firstSentences(r.Text, 1)
		if wordCount(fact) < 4 {
			fact = r.Title
		}
		fact = strings.NewReplacer("(", "", ")", "").Replace(cutRunes(trimEnd(fact), 240))
		out = append(out, note{Fact: upperFirst(fact), URL: r.URL})
	}
	return out
}

// foundNotes writes research notes from search results, under a line that says so.
func foundNotes(notes []note) string {
	var b strings.Builder
	b.WriteString("_Offline demo notes from the search results: each note is the first sentence of a result, unchecked; read the source before using it._\n")
	for _, n := range notes {
		b.WriteString("\n" + n.line())
	}
	return b.String()
}

// foundBlock lists what the searches found, for a text that is not the blog's notes
// (the proposal's research, a custom artifact with tools): "" when they found
// nothing.
func (t *task) foundBlock() string {
	notes := t.resultNotes()
	if len(notes) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("**What the searches found** (to verify before use)")
	for _, n := range notes {
		fmt.Fprintf(&b, "\n- %s (%s)", sentence(n.Fact), n.URL)
	}
	return b.String()
}
