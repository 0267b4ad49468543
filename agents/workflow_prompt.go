package agents

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/agents/mrkdwn"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
	"github.com/threadwright/threadwright/internal/textcut"
	"github.com/threadwright/threadwright/prompts"
)

// Bounds of what the workflow agent puts in a prompt, in bytes.
const (
	maxDependencyText = 16 << 10 // an approved artifact the task builds on
	maxExcerpt        = 300      // another approved artifact
	maxHistoryText    = 500      // one message of the thread
	maxPreviousOption = 400      // an option proposed before
	maxReviewOption   = 2000     // an option under self review
	maxItemTitle      = 200      // runes: an item's title, one line
	maxItemBrief      = 4 << 10  // an item's brief
)

// itemData is the prompts' view of it (nil for nil): a 1-based number, a one-line
// title and a bounded brief.
func itemData(it *conversation.Item) *prompts.Item {
	if it == nil {
		return nil
	}
	title := textcut.Ellipsis(oneLine(it.Title), maxItemTitle, spaceOrPunct)
	if title == "" {
		title = "(untitled)" // the item line needs a title
	}
	return &prompts.Item{Number: it.Index + 1, Total: it.Total, Title: title, Brief: textcut.BytesMark(strings.TrimSpace(it.Brief), maxItemBrief, textcut.Truncated)}
}

// itemName names what r writes in a user message: the artifact's title, or "item 2
// of Research".
func itemName(r conversation.ArtifactRequest) string {
	name := mrkdwn.Escape(r.Artifact.Title)
	if r.Item != nil {
		name = fmt.Sprintf("item %d of %s", r.Item.Index+1, name)
	}
	return name
}

func promptTools(specs []ToolSpec) []prompts.Tool {
	out := make([]prompts.Tool, len(specs))
	for i, s := range specs {
		out[i] = prompts.Tool{Name: s.Name, Description: s.Description}
	}
	return out
}

// contextKind says how much of the thread a task's system prompt shows.
type contextKind int

const (
	// fullContext: the approved artifacts, the summary and the recent history.
	fullContext contextKind = iota
	// judgeContext: the approved artifacts only; the judge reads the text, not the
	// discussion.
	judgeContext
	// briefContext: the summary and recent history, no artifact texts (reading a reply
	// with the small model).
	briefContext
)

// task is one WorkflowAgent call: a prompt, the commit function, and what to do with
// its arguments.
type task struct {
	name    string // for errors and logs: "propose options"
	model   string // without a profile
	tool    openai.FunctionDefinition
	prompt  string // the user message's template
	data    any
	context contextKind
	// tools are offered with the commit function, for research before it (Write);
	// nil: none.
	tools *Registry
	// seed are research calls run before the first model call, as if the model
	// had made them (the item's approved search queries); nil: none.
	seed []openai.ToolCall
	// accept reads the commit function's arguments; an error rejects them and its
	// text tells the model what was wrong.
	accept func(args json.RawMessage) error
	// userMessage is CommitError.UserMessage after tries failed tries.
	userMessage func(tries int) string
	// failedTools, when set, receives the research tools whose calls failed.
	failedTools *[]string
}

// messages builds the system prompt, rendered with set, and the task's user message;
// the system prompt shows at most history of the thread's newest messages.
func (t task) messages(set *prompts.Set, r conversation.ArtifactRequest, history int) ([]openai.ChatCompletionMessage, error) {
	system, err := set.Render(prompts.WorkflowSystem, t.systemData(r, history))
	if err != nil {
		return nil, err
	}
	user, err := set.Render(t.prompt, t.data)
	if err != nil {
		return nil, err
	}
	return []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: system},
		{Role: openai.ChatMessageRoleUser, Content: user},
	}, nil
}

// systemData is the WorkflowSystem template's data for r and t, with at most history
// of the thread's newest messages.
func (t task) systemData(r conversation.ArtifactRequest, history int) prompts.WorkflowSystemData {
	d := prompts.WorkflowSystemData{
		Workflow: prompts.WorkflowInfo{Title: r.Workflow.Title, Description: r.Workflow.Description, Inputs: inputs(r)},
		Language: languageName(r.Locale),
		ToolName: t.tool.Name,
	}
	if art := r.Artifact; art != nil {
		info := &prompts.ArtifactInfo{
			ID: art.ID, Title: art.Title, Description: art.Description,
			Mode: string(art.Mode), Guidance: r.Workflow.ExpandPrompt(art.Prompt, r.Inputs),
		}
		if info.Mode == "" {
			info.Mode = string(workflow.ModeDraft)
		}
		for _, c := range art.Criteria {
			info.Criteria = append(info.Criteria, prompts.Criterion{ID: c.ID, Description: c.Description, Critical: c.Critical})
		}
		d.Artifact = info
	}
	if t.context != briefContext {
		d.Dependencies, d.Others = approvedTexts(r)
	}
	if t.context != judgeContext {
		d.Summary = strings.TrimSpace(r.Summary)
		d.History = historyTurns(r.History, history)
	}
	return d
}

// approvedTexts splits r.Approved into the texts the task builds on (full, up to a
// bound) and the others (excerpts), in the workflow's order, then any ids the
// workflow does not declare, sorted. The artifact being worked on is left out. For a
// task about the whole workflow (r.Artifact nil), every approved text is a
// dependency.
func approvedTexts(r conversation.ArtifactRequest) (deps, others []prompts.ArtifactText) {
	var ids []string
	titles := map[string]string{}
	for _, art := range r.Workflow.Artifacts {
		titles[art.ID] = art.Title
		if _, ok := r.Approved[art.ID]; ok {
			ids = append(ids, art.ID)
		}
	}
	var extra []string
	for id := range r.Approved {
		if _, ok := titles[id]; !ok {
			extra = append(extra, id)
		}
	}
	slices.Sort(extra)
	ids = append(ids, extra...)
	for _, id := range ids {
		text := strings.TrimSpace(r.Approved[id])
		title := cmp.Or(titles[id], id)
		switch {
		case text == "":
			continue
		case r.Artifact == nil || slices.Contains(r.Artifact.DependsOn, id):
			deps = append(deps, prompts.ArtifactText{ID: id, Title: title, Text: textcut.BytesMark(text, maxDependencyText, textcut.Truncated)})
		case id != r.Artifact.ID:
			others = append(others, prompts.ArtifactText{ID: id, Title: title, Text: textcut.BytesMark(oneLine(text), maxExcerpt, textcut.Truncated)})
		}
	}
	return deps, others
}

// historyTurns returns the last n messages of history that people or the bot wrote,
// shortened to one line each.
func historyTurns(history []conversation.Message, n int) []prompts.Turn {
	var out []prompts.Turn
	for i := len(history) - 1; i >= 0 && len(out) < n; i-- {
		m := history[i]
		text := strings.TrimSpace(m.Text)
		if text == "" {
			continue
		}
		var role string
		switch m.Role {
		case conversation.RoleUser, conversation.RoleContext:
			role = "user"
		case conversation.RoleAssistant:
			role = "assistant"
		default:
			continue // revisions and the like live in the structured state
		}
		out = append(out, prompts.Turn{Role: role, Text: textcut.BytesMark(oneLine(text), maxHistoryText, textcut.Truncated)})
	}
	slices.Reverse(out)
	return out
}

// inputs lists r's filled workflow inputs in the workflow's order.
func inputs(r conversation.ArtifactRequest) []prompts.Input {
	var out []prompts.Input
	for _, in := range r.Workflow.Inputs {
		if v := strings.TrimSpace(r.Inputs[in.ID]); v != "" {
			out = append(out, prompts.Input{ID: in.ID, Label: in.Name(), Value: v})
		}
	}
	return out
}

// Approved queries (docs/workflows.md, "Pipelines"): when the item a Write researches
// lists its search queries (workflow.SearchQueries: the plan people approved says
// what will be searched), the write starts from them. Each query is run with every
// search tool the write is offered (approvedSearchTools), as if the model had
// called them, before the first model call; the model reads their results and may
// open pages or search further from there.

// approvedSearchTools are the tools an approved query is run with, in this order;
// each takes {"query": "…"}.
var approvedSearchTools = []string{"web_search", "search_knowledge"}

// maxApprovedCalls bounds the calls approved queries make before one write's first
// model call (a batch of many items lists many queries).
const maxApprovedCalls = 10

// approvedQueries returns the search queries r's item lists, or those of every item
// of a batch, each cut like a recovery plan's (cutQuery), without repeats, in order.
func approvedQueries(r conversation.ArtifactRequest) []string {
	items := r.Batch
	if r.Item != nil {
		items = []conversation.Item{*r.Item}
	}
	var out []string
	seen := map[string]bool{}
	for _, it := range items {
		for _, q := range workflow.SearchQueries(it.Brief) {
			if q = cutQuery(q); q != "" && !seen[strings.ToLower(q)] {
				seen[strings.ToLower(q)] = true
				out = append(out, q)
			}
		}
	}
	return out
}

// approvedSearches returns the tool calls that run queries with the search tools
// of tools, with ids "approved_query_<n>", and the queries they run: in order, as
// many as fit maxApprovedCalls with all their calls. Both are nil when tools offers
// no search tool or there are no queries.
func approvedSearches(tools *Registry, queries []string) (calls []openai.ToolCall, searched []string) {
	if tools == nil {
		return nil, nil
	}
	for _, q := range queries {
		var these []openai.ToolCall
		for _, name := range approvedSearchTools {
			if _, _, ok := tools.Lookup(name); !ok {
				continue
			}
			args, err := json.Marshal(map[string]string{"query": q})
			if err != nil {
				continue // a string always marshals
			}
			these = append(these, openai.ToolCall{
				ID: fmt.Sprintf("approved_query_%d", len(calls)+len(these)+1), Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: name, Arguments: string(args)},
			})
		}
		if len(these) == 0 || len(calls)+len(these) > maxApprovedCalls {
			break
		}
		calls, searched = append(calls, these...), append(searched, q)
	}
	return calls, searched
}
