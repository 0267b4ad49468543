package agents

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/agents/mrkdwn"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/internal/textcut"
)

// Coarse bounds of a task's text, in characters: the conversation scrubs secrets out
// of a task, then cuts it to what Slack shows (conversation.MaxTaskTitle and
// MaxTaskOutput), so a secret is never cut in two before it is scrubbed.
const (
	maxTaskTitle  = 8 * conversation.MaxTaskTitle
	maxTaskOutput = 8 * conversation.MaxTaskOutput
	// maxTaskSources bounds the sources shown on one task.
	maxTaskSources = 5
)

// toolTask is the thinking step of tool call tc (docs/architecture.md, "Assistant
// pipeline"): its title is the tool and its main argument ("fetch_url
// https://example.com"); it is pending until run, and with rec, its record once
// run, complete or error with a short output and the sources it read: the URL for
// fetch_url, the results' URLs for web_search, the documents for search_knowledge
// (linked when the document's name is a URL, else named in the output).
func toolTask(tc openai.ToolCall, rec *conversation.ToolCall) conversation.Task {
	t := conversation.Task{ID: tc.ID, Title: textcut.Ellipsis(toolTitle(tc), maxTaskTitle, nil), Status: conversation.TaskPending}
	if t.ID == "" {
		t.ID = tc.Function.Name
	}
	if rec == nil {
		return t
	}
	t.Status = conversation.TaskComplete
	if rec.Failed {
		t.Status = conversation.TaskError
	}
	var named []string
	t.Output, t.Sources, named = toolSources(tc, rec)
	if t.Output == "" {
		t.Output = firstLine(rec.Result)
	}
	if len(named) > 0 {
		t.Output = strings.Join(named, "; ")
	}
	t.Output = textcut.Ellipsis(t.Output, maxTaskOutput, nil)
	return t
}

// toolTitle is the tool's name and its first string argument, if any.
func toolTitle(tc openai.ToolCall) string {
	var args map[string]any
	_ = json.Unmarshal([]byte(tc.Function.Arguments), &args)
	for _, key := range []string{"url", "query", "q", "expression", "path", "id", "name"} {
		if v, ok := args[key].(string); ok && strings.TrimSpace(v) != "" {
			return tc.Function.Name + " " + strings.Join(strings.Fields(v), " ")
		}
	}
	return tc.Function.Name
}

var (
	// searchLink is a web_search result's URL line ("   https://…").
	searchLink = regexp.MustCompile(`(?m)^\s+(https?://\S+)\s*$`)
	// searchTitle is a web_search result's numbered title line ("1. Title").
	searchTitle = regexp.MustCompile(`(?m)^(\d+)\. (.+)$`)
)

// toolSources returns what a successful call of a web or knowledge tool read: an
// output line, URL sources, and the names of sources that have no URL.
func toolSources(tc openai.ToolCall, rec *conversation.ToolCall) (output string, sources []conversation.Source, named []string) {
	if rec.Failed {
		return "", nil, nil
	}
	switch tc.Function.Name {
	case "fetch_url":
		// The result is header lines ("URL: …", "Title: …"), a blank line, the text.
		var args struct {
			URL string `json:"url"`
		}
		_ = json.Unmarshal([]byte(tc.Function.Arguments), &args)
		link, title := args.URL, ""
		head, body, _ := strings.Cut(rec.Result, "\n\n")
		for line := range strings.Lines(head) {
			line = strings.TrimSpace(line)
			if v, ok := strings.CutPrefix(line, "URL: "); ok {
				link = v
			} else if v, ok := strings.CutPrefix(line, "Title: "); ok {
				title = v
			}
		}
		output = firstLine(body)
		text := link
		if title != "" {
			output, text = title, title
		}
		if isWebURL(link) {
			sources = append(sources, conversation.Source{URL: link, Text: textcut.Ellipsis(text, maxTaskTitle, nil)})
		}
	case "web_search":
		titles := searchTitle.FindAllStringSubmatch(rec.Result, -1)
		for i, m := range searchLink.FindAllStringSubmatch(rec.Result, maxTaskSources) {
			text := m[1]
			if i < len(titles) {
				text = titles[i][2]
			}
			sources = append(sources, conversation.Source{URL: m[1], Text: textcut.Ellipsis(text, maxTaskTitle, nil)})
		}
		output = firstLine(rec.Result)
	case "search_knowledge":
		// The passages' documents and headings, each once, as an answer lists them
		// when it cites none (mrkdwn.Attribute).
		for _, src := range mrkdwn.Attribute("", []conversation.ToolCall{*rec}).Retrieved {
			if isWebURL(src.URL) {
				sources = append(sources, conversation.Source{URL: src.URL, Text: textcut.Ellipsis(src.Title, maxTaskTitle, nil)})
			} else {
				named = append(named, src.Title)
			}
		}
	}
	return output, sources, named
}

// firstLine is the first non-empty line of s, its spaces collapsed.
func firstLine(s string) string {
	for line := range strings.Lines(s) {
		if line = strings.Join(strings.Fields(line), " "); line != "" {
			return line
		}
	}
	return ""
}

// isWebURL reports whether s is an absolute http(s) URL: a source a task can link.
func isWebURL(s string) bool {
	return strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://")
}
