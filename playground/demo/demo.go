package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// ModelName is the model name every Completion of the demo model reports
// (Completion.Model), so that logs and pages can label its answers.
const ModelName = "threadwright-demo"

// classifyScopeTool is the scope classifier's function (agents.ScopeChecker).
const classifyScopeTool = "classify_scope"

// Model is the offline demo model: an agents.Completer that answers from canned
// content, without a network or an API key. It reads only the request, keeps no
// state, and gives the same answer to the same request. It is safe for concurrent
// use; set its fields before the first call.
type Model struct {
	// Delay is how long each Complete call waits before answering, so that the
	// "working…" status can be seen (default 0: at once). The wait ends early, with
	// an error, when the call's context ends.
	Delay time.Duration
}

var _ agents.Completer = (*Model)(nil)

// New returns a demo model that answers at once.
func New() *Model { return &Model{} }

// Complete answers req with one choice, as the OpenAI Chat Completions API would
// (see the package documentation for what it recognises). The Completion has
// FinishReason "tool_calls" when it calls functions and "stop" otherwise, Usage
// estimated as one token per four characters of the request and of the answer,
// Model ModelName and Attempts 1. Its only error is ctx's, wrapped, when ctx ends
// before or during Delay.
func (m *Model) Complete(ctx context.Context, req openai.ChatCompletionRequest) (agents.Completion, error) {
	if err := ctx.Err(); err != nil {
		return agents.Completion{}, fmt.Errorf("demo: chat completion: %w", err)
	}
	if m.Delay > 0 {
		t := time.NewTimer(m.Delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return agents.Completion{}, fmt.Errorf("demo: chat completion: %w", ctx.Err())
		case <-t.C:
		}
	}
	content, calls := respond(req)
	comp := agents.Completion{
		Content:      content,
		ToolCalls:    calls,
		FinishReason: openai.FinishReasonStop,
		Usage:        usage(req, content, calls),
		Model:        ModelName,
		Attempts:     1,
	}
	if len(calls) > 0 {
		comp.FinishReason = openai.FinishReasonToolCalls
	}
	return comp, nil
}

// respond decides what kind of request req is and answers it: a forced function
// (workflow task or scope classifier), a workflow task that offers its commit
// function among tools, the executor's tool loop, or plain text.
func respond(req openai.ChatCompletionRequest) (string, []openai.ToolCall) {
	if name := forcedTool(req.ToolChoice); name != "" {
		if fn := findTool(req.Tools, name); fn != nil {
			return "", []openai.ToolCall{toolCall(len(req.Messages), 1, fn.Name, commit(req, fn))}
		}
	}
	choice := choiceString(req.ToolChoice)
	if fn := offeredCommit(req.Tools); fn != nil && choice != "none" {
		// A write with tools (the research): the demo calls the search tools first,
		// then commits from their results (research_tools.go).
		if calls := searchFirst(req, fn); len(calls) > 0 {
			return "", calls
		}
		return "", []openai.ToolCall{toolCall(len(req.Messages), 1, fn.Name, commit(req, fn))}
	}
	if len(req.Tools) > 0 && choice != "none" {
		return react(req, choice == "required")
	}
	return plain(req)
}

// forcedTool returns the function name a tool_choice object forces, or "".
func forcedTool(choice any) string {
	switch c := choice.(type) {
	case nil, string:
		return ""
	case openai.ToolChoice:
		return c.Function.Name
	case *openai.ToolChoice:
		if c == nil {
			return ""
		}
		return c.Function.Name
	}
	b, err := json.Marshal(choice)
	if err != nil {
		return ""
	}
	var v struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(b, &v) != nil {
		return ""
	}
	return v.Function.Name
}

// choiceString returns a tool_choice string ("auto", "none", "required"), or "".
func choiceString(choice any) string {
	s, _ := choice.(string)
	return s
}

// workflowCommits are agents.WorkflowAgent's commit functions.
var workflowCommits = []string{
	agents.CommitOptionsTool, agents.CommitSelectionTool, agents.CommitFinalTextTool,
	agents.CommitEvaluationTool, agents.CommitDocsetTool, agents.CommitRecoveryTool,
}

// offeredCommit returns the first of tools that is a workflow commit function, or nil.
func offeredCommit(tools []openai.Tool) *openai.FunctionDefinition {
	for _, t := range tools {
		if t.Function != nil && slices.Contains(workflowCommits, t.Function.Name) {
			return t.Function
		}
	}
	return nil
}

func findTool(tools []openai.Tool, name string) *openai.FunctionDefinition {
	for _, t := range tools {
		if t.Function != nil && t.Function.Name == name {
			return t.Function
		}
	}
	return nil
}

func toolCall(step, i int, name, args string) openai.ToolCall {
	return openai.ToolCall{
		ID:       fmt.Sprintf("call_demo_%d_%d", step, i),
		Type:     openai.ToolTypeFunction,
		Function: openai.FunctionCall{Name: name, Arguments: args},
	}
}

// usage estimates the token usage: a token per four characters, rounded up.
func usage(req openai.ChatCompletionRequest, content string, calls []openai.ToolCall) conversation.Usage {
	in := 0
	for _, m := range req.Messages {
		in += utf8.RuneCountInString(m.Role) + utf8.RuneCountInString(messageText(m))
		for _, tc := range m.ToolCalls {
			in += utf8.RuneCountInString(tc.Function.Name) + utf8.RuneCountInString(tc.Function.Arguments)
		}
	}
	for _, t := range req.Tools {
		if b, err := json.Marshal(t.Function); err == nil {
			in += utf8.RuneCount(b)
		}
	}
	out := utf8.RuneCountInString(content)
	for _, tc := range calls {
		out += utf8.RuneCountInString(tc.Function.Name) + utf8.RuneCountInString(tc.Function.Arguments)
	}
	return conversation.Usage{PromptTokens: max(1, (in+3)/4), CompletionTokens: max(1, (out+3)/4)}
}

// messageText is a message's text: its content, or the text parts of a multi-part
// content.
func messageText(m openai.ChatCompletionMessage) string {
	if m.Content != "" || len(m.MultiContent) == 0 {
		return m.Content
	}
	var parts []string
	for _, p := range m.MultiContent {
		if p.Type == openai.ChatMessagePartTypeText {
			parts = append(parts, p.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// marshal encodes v as JSON without HTML escaping (the arguments stay readable in
// logs).
func marshal(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // only strings, booleans, slices and maps
	}
	return strings.TrimSpace(b.String())
}

// --- Forced functions: the workflow agent's tasks and the scope classifier ---

// task is a forced-function request, read from its messages: the first system
// message (the workflow_system template) and the first user message (the task).
type task struct {
	system, text string
	schema       map[string]any

	workflow      string // "## The document: …"
	artifactID    string // "## The artifact now: Title (`id`)"
	artifactTitle string
	description   string            // the artifact's description, one line
	approved      map[string]string // id → approved text
	approvedTitle map[string]string // id → title
	approvedOrder []string

	theme   *theme           // nil for a custom workflow
	content *artifactContent // nil for an artifact the theme does not know

	topic string   // the workflow's topic input, "" when none (see topic.go)
	item  *item    // the item of a foreach artifact's task; nil for the whole artifact
	batch []item   // the items of a batch write (review_batch.go); nil for others
	blog  blogKind // the blog workflow's artifact, or blogNone

	results []searchResult // the search tools' results in the request (research_tools.go)
}

var (
	documentRe = regexp.MustCompile(`(?m)^## The document: (.+)$`)
	artifactRe = regexp.MustCompile("(?m)^## The artifact now: (.+) \\(`([^`]+)`\\)$")
	depRe      = regexp.MustCompile("^### (.+) \\(`([^`]+)`\\)$")
	otherRe    = regexp.MustCompile("^- (.+) \\(`([^`]+)`\\): (.*)$")
)

func readTask(req openai.ChatCompletionRequest, fn *openai.FunctionDefinition) *task {
	t := &task{approved: map[string]string{}, approvedTitle: map[string]string{}}
	for _, m := range req.Messages {
		switch {
		case m.Role == openai.ChatMessageRoleSystem && t.system == "":
			t.system = messageText(m)
		case m.Role == openai.ChatMessageRoleUser && t.text == "":
			t.text = messageText(m)
		}
	}
	t.schema = schemaOf(fn)
	if m := documentRe.FindStringSubmatch(t.system); m != nil {
		t.workflow = strings.TrimSpace(m[1])
	}
	if m := artifactRe.FindStringSubmatch(t.system); m != nil {
		t.artifactTitle, t.artifactID = strings.TrimSpace(m[1]), m[2]
		t.description = artifactDescription(t.system[strings.Index(t.system, m[0])+len(m[0]):])
	}
	t.readApproved()
	if t.batch = readBatch(t.text); t.batch == nil {
		t.item = readItem(t.text)
	}
	t.results = searchResults(req.Messages)
	t.theme = themes[t.workflow]
	if t.theme != nil {
		if c, ok := t.theme.Artifacts[t.artifactID]; ok {
			t.content = &c
		}
	}
	if t.workflow == blogWorkflow {
		t.blog = blogKindOf(t.artifactID, t.artifactTitle)
		if t.blog == blogPlan && t.content == nil {
			c := blogPlanContent
			t.content = &c
		}
	}
	t.topic = readTopic(t.system)
	t.onTopic()
	return t
}

// artifactDescription reads the artifact's description: the lines after its heading,
// up to "How it is made".
func artifactDescription(rest string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimLeft(rest, "\n"), "\n") {
		if strings.HasPrefix(l, "How it is made") || strings.HasPrefix(l, "#") || strings.TrimSpace(l) == "" {
			break
		}
		lines = append(lines, l)
	}
	return oneLine(strings.Join(lines, " "))
}

// readApproved reads the approved artifacts of the system prompt: the full texts of
// "## Approved artifacts to build on" and the excerpts of "## Other approved
// artifacts".
func (t *task) readApproved() {
	var section, id string
	var buf []string
	flush := func() {
		if id != "" {
			t.approved[id] = strings.TrimSpace(strings.Join(buf, "\n"))
		}
		id, buf = "", nil
	}
	for _, l := range strings.Split(t.system, "\n") {
		if strings.HasPrefix(l, "## ") && (!strings.HasPrefix(section, "## Approved artifacts") || isPromptSection(l)) {
			flush()
			section = l
			continue
		}
		switch {
		case strings.HasPrefix(section, "## Approved artifacts"):
			if m := depRe.FindStringSubmatch(l); m != nil {
				flush()
				id = m[2]
				t.addApproved(m[2], m[1])
				continue
			}
			if id != "" {
				buf = append(buf, l)
			}
		case strings.HasPrefix(section, "## Other approved artifacts"):
			if m := otherRe.FindStringSubmatch(l); m != nil {
				t.addApproved(m[2], m[1])
				t.approved[m[2]] = m[3]
			}
		}
	}
	flush()
}

// promptSections are the headings of the workflow_system template's sections. Inside
// "## Approved artifacts to build on" any other "## " line belongs to an artifact's
// text (the blog outline's sections, the items of a foreach artifact).
var promptSections = []string{
	"## The document:", "## The artifact now:", "## Approved artifacts", "## Other approved artifacts",
	"## Earlier in the thread", "## Recent messages", "## Language", "## Format", "## Saving",
}

func isPromptSection(line string) bool {
	return slices.ContainsFunc(promptSections, func(p string) bool { return strings.HasPrefix(line, p) })
}

func (t *task) addApproved(id, title string) {
	if _, ok := t.approvedTitle[id]; !ok {
		t.approvedOrder = append(t.approvedOrder, id)
	}
	t.approvedTitle[id] = title
}

// chosen returns the canned option whose title the approved text of artifact id
// contains: the option the team chose for it.
func (t *task) chosen(id string) (option, bool) {
	if t.theme == nil {
		return option{}, false
	}
	text := strings.ToLower(t.approved[id])
	if text == "" {
		return option{}, false
	}
	for _, o := range t.theme.Artifacts[id].Options {
		if strings.Contains(text, strings.ToLower(o.Title)) {
			return o, true
		}
	}
	return option{}, false
}

// fill replaces the placeholders {artifact_id} of s with the phrases of the chosen
// options, or the theme's defaults.
func (t *task) fill(s string) string {
	if t.theme == nil || !strings.Contains(s, "{") {
		return s
	}
	var pairs []string
	for id, def := range t.theme.Defaults {
		v := def
		if o, ok := t.chosen(id); ok && o.Phrase != "" {
			v = o.Phrase
		}
		pairs = append(pairs, "{"+id+"}", v)
	}
	return strings.NewReplacer(pairs...).Replace(s)
}

// commit returns the arguments of the forced function fn.
func commit(req openai.ChatCompletionRequest, fn *openai.FunctionDefinition) string {
	t := readTask(req, fn)
	switch fn.Name {
	case agents.CommitOptionsTool:
		if strings.Contains(t.text, reviewMarker) {
			return marshal(map[string]any{"options": t.reviewedOptions()})
		}
		return marshal(map[string]any{"options": t.options()})
	case agents.CommitSelectionTool:
		return marshal(t.selection())
	case agents.CommitFinalTextTool:
		revise := strings.HasPrefix(strings.TrimSpace(t.text), "Revise ") || quotedAfter(t.text, "The current text:") != ""
		switch {
		case !revise && len(t.batch) > 0:
			return marshal(map[string]string{"text": t.batchText()})
		case !revise && t.researchFails():
			return marshal(map[string]string{"text": "", "failure": t.researchFailure()})
		case t.blog != blogNone:
			return marshal(map[string]string{"text": t.blogText(revise)})
		case revise:
			return marshal(map[string]string{"text": t.revise()})
		}
		text := t.write()
		if found := t.foundBlock(); found != "" {
			text += "\n\n" + found
		}
		return marshal(map[string]string{"text": text})
	case agents.CommitEvaluationTool:
		return marshal(map[string]any{"results": t.evaluate()})
	case agents.CommitDocsetTool:
		if t.workflow == blogWorkflow {
			return marshal(map[string]string{"summary": t.blogSummary()})
		}
		return marshal(map[string]string{"summary": t.docsetSummary()})
	case agents.CommitRecoveryTool:
		return marshal(t.recovery())
	case classifyScopeTool:
		return marshal(map[string]any{"in_scope": true, "reason": "The offline demo model treats every message as in scope."})
	}
	return marshal(example(t.schema, fn.Name))
}

type optionArgs struct {
	Label string `json:"label"`
	Title string `json:"title"`
	Text  string `json:"text"`
}

// options proposes the options: as many as the schema's minItems, labelled by its
// label enum, from the artifact's pool, skipping the ones proposed last time.
func (t *task) options() []optionArgs {
	labels := t.optionLabels()
	n := len(labels)
	prev := map[string]bool{}
	for _, o := range listedOptions(t.text, "These options were proposed before") {
		prev[strings.ToLower(o.Title)] = true
	}
	var pool []option
	if t.content != nil {
		pool = t.content.Options
	}
	picked := pick(pool, prev, n)
	if len(picked) < n {
		picked = append(picked, pick(t.genericOptions(), prev, n-len(picked))...)
	}
	instr := quotedAfter(t.text, "The team asked for this in the new options:")
	out := make([]optionArgs, n)
	for i, o := range picked {
		text := t.fill(o.Text)
		if instr != "" {
			if wantsShorter(instr) {
				text = firstSentences(text, 1)
			}
			text += " As asked: " + trimEnd(oneLine(instr)) + "."
		}
		out[i] = optionArgs{Label: labels[i], Title: o.Title, Text: text}
	}
	return out
}

// optionLabels reads the labels of commit_artifact_options' schema: its label enum,
// or A, B, C… for minItems.
func (t *task) optionLabels() []string {
	opts := prop(t.schema, "options")
	n := intOf(opts["minItems"], workflowDefaultOptions)
	labels := enumOf(prop(itemsOf(opts), "label"))
	if len(labels) != n {
		labels = make([]string, n)
		for i := range labels {
			labels[i] = string(rune('A' + i))
		}
	}
	return labels
}

// workflowDefaultOptions is the option count when the schema names none.
const workflowDefaultOptions = 3

// pick returns n options of pool: those whose titles are not in prev first, in
// order, then the others.
func pick(pool []option, prev map[string]bool, n int) []option {
	var fresh, old []option
	for _, o := range pool {
		if prev[strings.ToLower(o.Title)] {
			old = append(old, o)
		} else {
			fresh = append(fresh, o)
		}
	}
	all := append(fresh, old...)
	return all[:min(n, len(all))]
}

// genericOptions are the options of an artifact without canned content.
func (t *task) genericOptions() []option {
	title := "“" + orDefault(t.artifactTitle, "this artifact") + "”"
	if t.topic != "" {
		title += " for “" + t.topic + "”"
	}
	desc := sentence(t.description)
	if desc == "" {
		desc = "what the team needs from it."
	}
	out := make([]option, len(genericAngles))
	for i, a := range genericAngles {
		text := strings.NewReplacer("{title}", title, "{description}", desc).Replace(a.text)
		out[i] = option{Title: a.title, Text: text}
	}
	return out
}

// selection reads the reply of the artifact_selection task.
func (t *task) selection() map[string]any {
	reply := quotedAfter(t.text, "A person replied in the thread:")
	opts := listedOptions(t.text, "The team was shown these options")
	label, instr, regen := interpret(reply, opts)
	if labels := enumOf(prop(t.schema, "label")); label != "" && len(labels) > 0 && !slices.Contains(labels, label) {
		label = ""
	}
	return map[string]any{"label": label, "instructions": instr, "regenerate": regen}
}

// write writes the artifact: from the chosen option, or the canned draft. An item of
// an artifact without canned content gets a generic draft of its own, without notes.
func (t *task) write() string {
	if t.item != nil && t.content == nil {
		return t.writeItem()
	}
	var text string
	if sel, ok := selectedOption(t.text); ok {
		text = t.writeChoice(sel)
	} else {
		text = t.writeDraft()
	}
	return t.apply(text, quotedAfter(t.text, "The team's instructions:"), "Written as asked")
}

func (t *task) writeChoice(sel option) string {
	lead := asAskedRe.ReplaceAllString(sel.Text, "")
	if rest, ok := strings.CutPrefix(lead, sel.Title+": "); ok {
		lead = upperFirst(rest) // "Forkcast: a blend…" under the bold title "Forkcast."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "**%s.** %s", trimEnd(sel.Title), lead)
	points := t.genericPoints()
	if t.content != nil {
		for _, o := range t.content.Options {
			if strings.EqualFold(o.Title, sel.Title) {
				points = o.Points
				break
			}
		}
	}
	b.WriteString("\n")
	for _, p := range points {
		b.WriteString("\n- " + t.fill(p))
	}
	if t.content != nil && t.content.Close != "" {
		b.WriteString("\n\n" + t.fill(t.content.Close))
	}
	return b.String()
}

func (t *task) writeDraft() string {
	if t.content != nil && t.content.Text != "" {
		return t.fill(t.content.Text)
	}
	desc := sentence(t.description)
	if desc == "" {
		desc = "What the team needs from this part of the document."
	}
	var b strings.Builder
	b.WriteString(desc)
	b.WriteString("\n")
	for _, p := range t.genericPoints() {
		b.WriteString("\n- " + p)
	}
	return b.String()
}

// writeItem writes one item of a foreach artifact without canned content: its title,
// its brief (or the artifact's description) and the generic points.
func (t *task) writeItem() string {
	about := sentence(firstSentences(oneLine(t.item.Brief), 2))
	if about == "" {
		about = orDefault(sentence(t.description), "What the team needs from this part of the document.")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "**%s.** %s\n", trimEnd(t.item.Title), about)
	for _, p := range t.genericPoints() {
		b.WriteString("\n- " + p)
	}
	return b.String()
}

// genericPoints are the bullet points of an artifact without canned content.
func (t *task) genericPoints() []string {
	var pts []string
	if t.topic != "" {
		pts = append(pts, "**About:** "+sentence(t.topic))
	}
	if len(t.approvedOrder) > 0 {
		var titles []string
		for _, id := range t.approvedOrder {
			titles = append(titles, t.approvedTitle[id])
		}
		pts = append(pts, "**Builds on:** the approved "+strings.Join(titles, ", ")+".")
	}
	if d := sentence(t.description); d != "" {
		pts = append(pts, "**What it covers:** "+d)
	}
	return append(pts,
		"**First step:** turn this into one concrete action with an owner and a date.",
		"**To confirm:** names, figures and dates, marked as placeholders until someone checks them.")
}

// revise applies the team's request to the current text. An item's revision is a
// workflow's editor pass: the text comes back tightened, without a note.
func (t *task) revise() string {
	cur := notesRe.ReplaceAllString(quotedAfter(t.text, "The current text:"), "")
	if t.item != nil && strings.TrimSpace(cur) != "" {
		return editSection(cur)
	}
	instr := quotedAfter(t.text, "The team's request:")
	if isEnhance(instr) && strings.TrimSpace(cur) != "" {
		// An enhancement pass (a workflow's enhance prompt): the same text, its
		// wording tightened, without a note.
		return enhanceText(strings.TrimSpace(cur))
	}
	if instr == "" {
		instr = "clearer and stronger, same meaning"
	}
	ph := workflow.Placeholders(cur)
	if len(ph) > 0 && strings.Contains(instr, "placeholders") {
		cur = fillSlots(strings.TrimSpace(cur), ph)
	}
	if failed := failedCriteria(instr); len(failed) > 0 {
		// The engine's automatic revision after a failing verdict: the note names
		// what it fixed rather than quoting the whole request.
		return t.apply(strings.TrimSpace(cur), "meet "+strings.Join(failed, "; "), "Revised as asked")
	}
	if len(ph) > 0 && strings.Contains(instr, "placeholders") {
		return cur
	}
	return t.apply(strings.TrimSpace(cur), instr, "Revised as asked")
}

// failedCriteria returns the criteria an automatic revision's request lists after
// "The evaluation failed" (lines "- description (critical): reason"), each as
// “description”, or nil when instr is no such request.
func failedCriteria(instr string) []string {
	_, list, ok := strings.Cut(instr, "The evaluation failed")
	if !ok {
		return nil
	}
	var out []string
	for _, l := range strings.Split(list, "\n") {
		desc, found := strings.CutPrefix(strings.TrimSpace(l), "- ")
		if !found {
			continue
		}
		if i := strings.Index(desc, ": "); i >= 0 {
			desc = desc[:i]
		}
		desc = strings.TrimSuffix(desc, " (critical)")
		out = append(out, "“"+trimEnd(desc)+"”")
	}
	return out
}

// fillSlots replaces each template slot ph of text, such as "[product]", with a plain
// phrase ("the product"), as an editor asked to fill it without a name would.
func fillSlots(text string, ph []string) string {
	var pairs []string
	for _, p := range ph {
		pairs = append(pairs, p, "the "+strings.ToLower(strings.Trim(p, "[]")))
	}
	return strings.NewReplacer(pairs...).Replace(text)
}

// apply makes instructions visible in text: a shorter text for "shorter", a longer
// one for "more detail", and a closing note that quotes them. A revision asked for
// anything else adds a paragraph that puts the text in practice (revisedMark), so that
// the text itself changes: the engine keeps the note apart, and evaluates the text
// alone.
func (t *task) apply(text, instr, verb string) string {
	instr = trimEnd(oneLine(instr))
	if instr == "" {
		return text
	}
	switch {
	case wantsShorter(instr):
		text = shorten(text)
	case wantsLonger(instr):
		more := ""
		if t.content != nil {
			more = t.fill(t.content.More)
		}
		if more == "" {
			more = "**In more detail:** " + orDefault(sentence(t.description), "the points above, each with an owner and a date.")
		}
		text += "\n\n" + more
	case verb == "Revised as asked" && !strings.Contains(text, revisedMark):
		text += "\n\n" + revisedMark + " " + orDefault(sentence(t.description), "each point above gets an owner and a date.")
	}
	return text + "\n\n_" + verb + ": " + instr + "._"
}

// revisedMark opens the paragraph apply adds to a revision.
const revisedMark = "**In practice:**"

var (
	// notesRe matches the notes apply adds, removed before a revision adds its own.
	notesRe = regexp.MustCompile(`(?m)^_(Written|Revised) as asked: .*_\s*$`)
	// asAskedRe matches the sentence options adds for the team's instructions.
	asAskedRe = regexp.MustCompile(` As asked: .*$`)
)

type resultArgs struct {
	ID     string `json:"id"`
	Pass   bool   `json:"pass"`
	Reason string `json:"reason"`
}

// evaluate judges the text: a real check where a criterion states a word limit (and,
// for the blog, the checks of checkBlog); otherwise a pass, except that about two
// texts in five (by a hash of the artifact id and the text) fail one criterion, so
// that both outcomes can be seen. A text revised at the team's request (one with
// revisedMark or a longer one, see apply) passes, so a
// revision visibly fixes it. The blog's texts fail only real checks: most of its
// artifacts are written by a pipeline that nobody reviews.
func (t *task) evaluate() []resultArgs {
	text := quotedAfter(t.text, "The text:")
	criteria := listedCriteria(t.text)
	if len(criteria) == 0 {
		for _, id := range enumOf(prop(itemsOf(prop(t.schema, "results")), "id")) {
			criteria = append(criteria, criterion{ID: id})
		}
	}
	h := fnv.New32a()
	h.Write([]byte(t.artifactID + "\x00" + text))
	sum := h.Sum32()
	failAt := -1
	if sum%5 < 2 && len(criteria) > 0 && !strings.Contains(text, revisedMark) && !strings.Contains(text, "**In more detail:**") && t.workflow != blogWorkflow {
		failAt = int(sum/5) % len(criteria)
	}
	out := make([]resultArgs, len(criteria))
	failed := false
	for i, c := range criteria {
		pass, reason := checkLimit(c.Description, text)
		if reason == "" && t.workflow == blogWorkflow {
			pass, reason = checkBlog(c.Description, text, t.blog, t.wordcount())
		}
		failed = failed || !pass
		out[i] = resultArgs{ID: c.ID, Pass: pass, Reason: reason}
	}
	for i, c := range criteria {
		switch {
		case out[i].Reason != "":
		case i == failAt && !failed:
			out[i].Pass = false
			out[i].Reason = "Not clearly met yet: " + quoteCriterion(c) + "; add a sentence that shows it."
		default:
			out[i].Pass = true
			out[i].Reason = "Met: " + quoteCriterion(c) + "."
		}
	}
	return out
}

var (
	wholeLimitRe    = regexp.MustCompile(`(?i)^is at most (\d+) words`)
	sentenceLimitRe = regexp.MustCompile(`(?i)sentence of at most (\d+) words`)
	// boldLeadRe matches the bold title a written choice artifact starts with.
	boldLeadRe = regexp.MustCompile(`^\*\*[^*\n]+\*\*\s*`)
)

// checkLimit checks a criterion that states a word limit on the whole text or on
// its first sentence. reason is "" for other criteria.
func checkLimit(desc, text string) (pass bool, reason string) {
	text = notesRe.ReplaceAllString(text, "")
	if m := wholeLimitRe.FindStringSubmatch(desc); m != nil {
		limit, _ := strconv.Atoi(m[1])
		n := len(strings.Fields(text))
		if n <= limit {
			return true, fmt.Sprintf("Met: %d words, within the limit of %d.", n, limit)
		}
		return false, fmt.Sprintf("Too long: %d words, over the limit of %d; cut %d.", n, limit, n-limit)
	}
	if m := sentenceLimitRe.FindStringSubmatch(desc); m != nil {
		limit, _ := strconv.Atoi(m[1])
		lead := firstSentences(boldLeadRe.ReplaceAllString(strings.TrimSpace(text), ""), 1)
		n := len(strings.Fields(lead))
		if n <= limit {
			return true, fmt.Sprintf("Met: the lead sentence has %d words (limit %d).", n, limit)
		}
		return false, fmt.Sprintf("The lead sentence has %d words, over the limit of %d.", n, limit)
	}
	return true, ""
}

func quoteCriterion(c criterion) string {
	if c.Description == "" {
		return c.ID
	}
	return "“" + trimEnd(cutRunes(c.Description, 200)) + "”"
}

// docsetSummary writes the report's summary.
func (t *task) docsetSummary() string {
	var s string
	if t.theme != nil {
		s = t.fill(t.theme.Summary)
	} else {
		title := "“" + orDefault(t.workflow, "The document") + "”"
		if t.topic != "" {
			title += " on “" + t.topic + "”"
		}
		var titles []string
		for _, id := range t.approvedOrder {
			titles = append(titles, t.approvedTitle[id])
		}
		switch len(titles) {
		case 0:
			s = title + " is complete. The attached document brings its parts together."
		default:
			s = fmt.Sprintf("%s is complete: its %d parts (%s) were proposed, reviewed and approved in this thread. The attached document brings them together as one text.",
				title, len(titles), strings.Join(titles, ", "))
		}
	}
	instr := quotedAfter(t.text, "The team's instructions:")
	if instr != "" && wantsShorter(instr) {
		return firstSentences(s, 1)
	}
	return t.apply(s, instr, "Written as asked")
}

// --- Reading the task texts (prompts/templates/artifact_*.tmpl) ---

// quotedAfter returns the block quoted with "> " (the templates' quote function)
// on the lines right after the line that starts with marker, or "".
func quotedAfter(text, marker string) string {
	i := strings.Index(text, marker)
	if i < 0 {
		return ""
	}
	rest := text[i:]
	nl := strings.IndexByte(rest, '\n')
	if nl < 0 {
		return ""
	}
	var lines []string
	for _, l := range strings.Split(rest[nl+1:], "\n") {
		if !strings.HasPrefix(l, ">") {
			break
		}
		lines = append(lines, strings.TrimPrefix(strings.TrimPrefix(l, ">"), " "))
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

var (
	listedOptionRe = regexp.MustCompile(`^([A-Z])\. (.*?): (.*)$`)
	selectedRe     = regexp.MustCompile(`(?m)^The team chose option ([A-Z]), "(.*)":$`)
	criterionRe    = regexp.MustCompile(`^- ([^:\s]+): (.*)$`)
)

// listedOptions reads the lines "A. Title: text" that follow the line starting with
// marker, up to a blank line.
func listedOptions(text, marker string) []workflow.Option {
	i := strings.Index(text, marker)
	if i < 0 {
		return nil
	}
	var out []workflow.Option
	for _, l := range strings.Split(text[i:], "\n")[1:] {
		if strings.TrimSpace(l) == "" {
			break
		}
		if m := listedOptionRe.FindStringSubmatch(l); m != nil {
			out = append(out, workflow.Option{Label: m[1], Title: m[2], Text: m[3]})
		}
	}
	return out
}

// selectedOption reads the option the team chose from a write task.
func selectedOption(text string) (option, bool) {
	m := selectedRe.FindStringSubmatchIndex(text)
	if m == nil {
		return option{}, false
	}
	title := text[m[4]:m[5]]
	body := quotedAfter(text[m[0]:], "The team chose option")
	return option{Title: title, Text: body}, true
}

type criterion struct{ ID, Description string }

// listedCriteria reads the "- id: description" lines after "Criteria:".
func listedCriteria(text string) []criterion {
	i := strings.Index(text, "Criteria:")
	if i < 0 {
		return nil
	}
	var out []criterion
	for _, l := range strings.Split(text[i:], "\n")[1:] {
		if strings.TrimSpace(l) == "" {
			break
		}
		if m := criterionRe.FindStringSubmatch(l); m != nil {
			// A critical criterion ends with the evaluation prompt's mark.
			out = append(out, criterion{ID: m[1], Description: strings.TrimSuffix(m[2], " (critical: must pass)")})
		}
	}
	return out
}

// --- Reading a reply to options ---

var (
	regenerateWords = []string{
		"none of", "neither", "other options", "new options", "different options", "more options",
		"something else", "try again", "start over", "regenerate",
		"ни один", "ни одн", "ничего из", "другие вариант", "новые вариант", "не подходит", "не нравится",
	}
	connectors = []string{", but ", " but ", ", но ", " но ", ", только ", "; ", " — ", " - ", ", "}
	// politeWords are dropped from instructions.
	politeWords = []string{"please", "thanks", "thank you", "пожалуйста", "спасибо"}
	ordinals    = map[string]int{
		"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4, "fifth": 5, "5th": 5,
	}
	ruOrdinals       = []string{"перв", "втор", "трет", "четв", "пят"}
	labelPrefixRe    = regexp.MustCompile(`(?i)(?:(?:option|variant|вариант)\s+|#\s*)([a-eа-е1-5])(?:[^\p{L}\p{N}]|$)`)
	cyrillicToLatin  = map[rune]string{'А': "A", 'Б': "B", 'В': "B", 'С': "C", 'Г': "D", 'Д': "E", 'Е': "E", 'б': "B", 'г': "D", 'д': "E"}
	cyrillicFromAnyA = map[rune]string{'а': "A", 'в': "B", 'с': "C", 'е': "E"}
)

// interpret reads a reply to options: the option it chooses (by "option X", an
// upper-case letter, an ordinal, a number, a title or shared words, a lower-case
// letter), the changes asked for with it, or whether it asks for new options.
func interpret(reply string, opts []workflow.Option) (label, instructions string, regenerate bool) {
	low := strings.ToLower(reply)
	if strings.Trim(low, " .!") == "none" || containsAny(low, regenerateWords) {
		return "", instructionsOf(reply), true
	}
	labels := make([]string, len(opts))
	for i, o := range opts {
		labels[i] = o.Label
	}
	label = chooseLabel(reply, opts, labels)
	if label == "" {
		return "", "", false // neither a choice nor a request for new options
	}
	for _, o := range opts {
		if o.Label == label && o.Title != "" {
			reply = replaceFold(reply, o.Title, "") // its commas are not connectors
		}
	}
	return label, instructionsOf(reply), false
}

func chooseLabel(reply string, opts []workflow.Option, labels []string) string {
	valid := func(l string) string {
		if slices.Contains(labels, l) {
			return l
		}
		return ""
	}
	byPosition := func(n int) string {
		if n >= 1 && n <= len(labels) {
			return labels[n-1]
		}
		return ""
	}
	// "option b", "вариант Б", "#2"
	if m := labelPrefixRe.FindStringSubmatch(reply); m != nil {
		r, _ := utf8.DecodeRuneInString(m[1])
		switch {
		case unicode.IsDigit(r):
			if l := byPosition(int(r - '0')); l != "" {
				return l
			}
		case r < utf8.RuneSelf:
			if l := valid(strings.ToUpper(m[1])); l != "" {
				return l
			}
		default:
			up := unicode.ToUpper(r)
			if l := valid(cyrillicToLatin[up]); l != "" {
				return l
			}
		}
	}
	words := tokens(reply)
	// An upper-case letter standing alone: "B, but shorter", "Б". A first word that
	// is also a word of its own ("A shorter one", "В целом…") counts only when
	// punctuation follows it.
	for i, w := range words {
		r := firstRune(w)
		if utf8.RuneCountInString(w) != 1 || !unicode.IsUpper(r) {
			continue
		}
		l := valid(w)
		if l == "" {
			l = valid(cyrillicToLatin[r])
		}
		if l == "" || (i == 0 && len(words) > 1 && strings.ContainsRune("AАВС", r) && !separatedAfterFirst(reply)) {
			continue
		}
		return l
	}
	for _, w := range words {
		lw := strings.ToLower(w)
		if n, ok := ordinals[lw]; ok {
			return byPosition(n)
		}
		if lw == "last" || strings.HasPrefix(lw, "последн") {
			return byPosition(len(labels))
		}
		for i, p := range ruOrdinals {
			if strings.HasPrefix(lw, p) && utf8.RuneCountInString(lw) > 3 {
				return byPosition(i + 1)
			}
		}
	}
	for _, w := range words {
		if n, err := strconv.Atoi(w); err == nil && n >= 1 && n <= len(labels) {
			return byPosition(n)
		}
	}
	low := strings.ToLower(reply)
	for _, o := range opts {
		if o.Title != "" && strings.Contains(low, strings.ToLower(o.Title)) {
			return o.Label
		}
	}
	if l := byWords(low, opts); l != "" {
		return l
	}
	for i, w := range words {
		if utf8.RuneCountInString(w) != 1 {
			continue
		}
		r := firstRune(w)
		switch {
		case r == 'a':
			if i == 0 && separatedAfterFirst(reply) {
				return valid("A")
			}
		case r >= 'b' && r <= 'e':
			if l := valid(strings.ToUpper(w)); l != "" {
				return l
			}
		case cyrillicToLatin[r] != "":
			if l := valid(cyrillicToLatin[r]); l != "" {
				return l
			}
		case cyrillicFromAnyA[r] != "" && len(words) == 1:
			return valid(cyrillicFromAnyA[r])
		}
	}
	return ""
}

// byWords picks the option that shares the most words (of five letters or more,
// compared by their first five letters) with the reply, when one clearly does.
func byWords(low string, opts []workflow.Option) string {
	stems := func(s string) map[string]bool {
		out := map[string]bool{}
		for _, w := range tokens(strings.ToLower(s)) {
			if utf8.RuneCountInString(w) < 5 || stopWords[w] {
				continue
			}
			out[string([]rune(w)[:5])] = true
		}
		return out
	}
	reply := stems(low)
	best, bestScore, tie := "", 0, false
	for _, o := range opts {
		score := 0
		title, text := stems(o.Title), stems(o.Text)
		for s := range reply {
			if title[s] {
				score += 2
			} else if text[s] {
				score++
			}
		}
		switch {
		case score > bestScore:
			best, bestScore, tie = o.Label, score, false
		case score == bestScore && score > 0:
			tie = true
		}
	}
	if tie {
		return ""
	}
	return best
}

var stopWords = map[string]bool{
	"option": true, "options": true, "about": true, "which": true, "would": true, "these": true,
	"there": true, "their": true, "other": true, "think": true, "prefer": true, "shorter": true,
	"longer": true, "better": true, "please": true, "maybe": true, "really": true, "lets": true,
	"вариант": true, "давайте": true, "пожалуйста": true, "короче": true,
}

// separatedAfterFirst reports whether the reply's first word is followed by
// punctuation or nothing: "a, but shorter", "a."
func separatedAfterFirst(reply string) bool {
	s := strings.TrimSpace(reply)
	_, size := utf8.DecodeRuneInString(s)
	rest := strings.TrimLeft(s[size:], " ")
	if rest == "" {
		return true
	}
	r, _ := utf8.DecodeRuneInString(rest)
	return unicode.IsPunct(r)
}

// instructionsOf returns what follows the reply's first connector (", but", "; ",
// ", ", …), without polite words.
func instructionsOf(reply string) string {
	s := oneLine(reply)
	low := strings.ToLower(s)
	at, size := -1, 0
	for _, c := range connectors {
		if i := strings.Index(low, c); i >= 0 && (at < 0 || i < at) {
			at, size = i, len(c)
		}
	}
	if at < 0 {
		return ""
	}
	rest := strings.TrimSpace(s[at+size:])
	for again := true; again; {
		again = false
		for _, p := range []string{"make it ", "just ", "only ", "but ", "and ", "сделай ", "сделайте ", "но ", "и "} {
			if strings.HasPrefix(strings.ToLower(rest), p) {
				rest, again = rest[len(p):], true
			}
		}
	}
	for _, w := range politeWords {
		rest = replaceFold(rest, w, "")
	}
	return strings.Trim(oneLine(rest), " ,.;:!?")
}

// replaceFold replaces every case-insensitive occurrence of the word old in s.
func replaceFold(s, old, repl string) string {
	expr := `(?i)\b` + regexp.QuoteMeta(old) + `\b`
	if strings.IndexFunc(old, func(r rune) bool { return r >= utf8.RuneSelf }) >= 0 {
		expr = `(?i)` + regexp.QuoteMeta(old) // \b knows only ASCII letters
	}
	return regexp.MustCompile(expr).ReplaceAllString(s, repl)
}

// tokens splits s into words of letters and digits.
func tokens(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

func firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}

// --- The executor's tool loop ---

// react answers a request of the ReAct executor: it calls current_time or calculate
// when the question asks for them, answers from the tool results once they are in,
// and otherwise gives the demo's canned reply.
func react(req openai.ChatCompletionRequest, required bool) (string, []openai.ToolCall) {
	msgs := req.Messages
	if len(msgs) > 0 && msgs[len(msgs)-1].Role == openai.ChatMessageRoleTool {
		return answerFromTools(msgs), nil
	}
	q := lastUserText(msgs)
	var calls []openai.ToolCall
	for _, c := range plannedCalls(q, req.Tools) {
		calls = append(calls, toolCall(len(msgs), len(calls)+1, c.name, c.args))
	}
	if len(calls) == 0 && required {
		for _, t := range req.Tools {
			if t.Function != nil {
				calls = append(calls, toolCall(len(msgs), 1, t.Function.Name, marshal(example(schemaOf(t.Function), t.Function.Name))))
				break
			}
		}
	}
	if len(calls) > 0 {
		return "", calls
	}
	return chatReply(q), nil
}

// plain answers a request without tools: the summarizer, the executor's final
// answer after its step limit, or a chat message.
func plain(req openai.ChatCompletionRequest) (string, []openai.ToolCall) {
	msgs := req.Messages
	if len(msgs) > 0 && msgs[0].Role == openai.ChatMessageRoleSystem && strings.HasPrefix(messageText(msgs[0]), "You keep the running summary") {
		return threadSummary(msgs), nil
	}
	for _, m := range msgs {
		if m.Role == openai.ChatMessageRoleTool {
			return answerFromTools(msgs), nil
		}
	}
	return chatReply(lastUserText(msgs)), nil
}

func lastUserText(msgs []openai.ChatCompletionMessage) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == openai.ChatMessageRoleUser {
			return strings.TrimSpace(messageText(msgs[i]))
		}
	}
	return ""
}

type plannedCall struct{ name, args string }

var (
	timeQuestions = []string{
		"what time", "time is it", "current time", "time now", "the time in", "what's the time", "whats the time",
		"what day is", "today's date", "todays date", "what date", "date today", "what is the date", "what's the date",
		"который час", "сколько времени", "сколько сейчас времени", "текущее время", "какое сегодня число",
		"какой сегодня день", "какая сегодня дата", "какое число", "время в ", "какое сейчас время",
	}
	calcWords = []string{
		"what is", "what's", "whats", "calculate", "compute", "how much is", "evaluate", "solve", "=",
		"сколько будет", "посчитай", "вычисли", "сколько", "чему равно",
	}
	cities = []struct{ stem, zone string }{
		{"new york", "America/New_York"}, {"нью-йорк", "America/New_York"}, {"нью йорк", "America/New_York"},
		{"san francisco", "America/Los_Angeles"}, {"los angeles", "America/Los_Angeles"},
		{"london", "Europe/London"}, {"лондон", "Europe/London"},
		{"paris", "Europe/Paris"}, {"париж", "Europe/Paris"},
		{"berlin", "Europe/Berlin"}, {"берлин", "Europe/Berlin"},
		{"moscow", "Europe/Moscow"}, {"москв", "Europe/Moscow"},
		{"tokyo", "Asia/Tokyo"}, {"токио", "Asia/Tokyo"},
		{"sydney", "Australia/Sydney"}, {"сидне", "Australia/Sydney"},
		{"singapore", "Asia/Singapore"}, {"сингапур", "Asia/Singapore"},
	}
	ianaRe   = regexp.MustCompile(`\b[A-Z][A-Za-z_]+/[A-Z][A-Za-z_]+\b`)
	timesRe  = regexp.MustCompile(`(\d)\s*[xXхХ]\s*(\d)`)
	exprRe   = regexp.MustCompile(`[-+(]*\s*\d[\d\s.()+\-*/%]*`)
	binaryRe = regexp.MustCompile(`\d\s*\)*\s*[-+*/%]\s*\(*\s*[-+]?\s*\d`)
)

// plannedCalls returns the tool calls a question asks for, among the offered tools.
func plannedCalls(q string, tools []openai.Tool) []plannedCall {
	var out []plannedCall
	low := strings.ToLower(q)
	if findTool(tools, "current_time") != nil && containsAny(low, timeQuestions) {
		args := map[string]string{}
		if z := timeZone(q); z != "" {
			args["timezone"] = z
		}
		out = append(out, plannedCall{"current_time", marshal(args)})
	}
	if findTool(tools, "calculate") != nil {
		if expr := expression(q); expr != "" {
			out = append(out, plannedCall{"calculate", marshal(map[string]string{"expression": expr})})
		}
	}
	if len(out) == 0 && findTool(tools, searchKnowledgeTool) != nil {
		if query := knowledgeQuery(q); query != "" {
			out = append(out, plannedCall{searchKnowledgeTool, marshal(map[string]string{"query": query})})
		}
	}
	return out
}

func timeZone(q string) string {
	if z := ianaRe.FindString(q); z != "" {
		return z
	}
	low := strings.ToLower(q)
	for _, c := range cities {
		if strings.Contains(low, c.stem) {
			return c.zone
		}
	}
	if strings.Contains(low, "utc") || strings.Contains(low, "gmt") {
		return "UTC"
	}
	return ""
}

// expression returns the arithmetic expression of a question such as "what is 17*23?",
// or "" when it has none (or reads like a date or a plain number).
func expression(q string) string {
	s := strings.NewReplacer("×", "*", "·", "*", "÷", "/", "−", "-", "–", "-").Replace(q)
	s = timesRe.ReplaceAllString(s, "$1*$2")
	best := ""
	for _, m := range exprRe.FindAllString(s, -1) {
		m = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(m), ".-+*/%("))
		if binaryRe.MatchString(m) && len(m) > len(best) {
			best = m
		}
	}
	if best == "" || strings.Count(best, "(") != strings.Count(best, ")") {
		return ""
	}
	rest := strings.TrimSpace(strings.Replace(s, best, "", 1))
	if containsAny(strings.ToLower(q), calcWords) || utf8.RuneCountInString(rest) <= 3 {
		return best
	}
	return ""
}

func containsAny(s string, subs []string) bool {
	for _, w := range subs {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// answerFromTools writes the answer from the results of the last tool calls.
func answerFromTools(msgs []openai.ChatCompletionMessage) string {
	at := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == openai.ChatMessageRoleAssistant && len(msgs[i].ToolCalls) > 0 {
			at = i
			break
		}
	}
	if at < 0 {
		return chatReply(lastUserText(msgs))
	}
	ru := isRussian(lastUserText(msgs[:at]))
	calls := map[string]openai.ToolCall{}
	for _, tc := range msgs[at].ToolCalls {
		calls[tc.ID] = tc
	}
	var lines []string
	for _, m := range msgs[at+1:] {
		if m.Role != openai.ChatMessageRoleTool {
			continue
		}
		tc := calls[m.ToolCallID]
		lines = append(lines, toolLine(tc, strings.TrimSpace(agents.ToolOutputBody(messageText(m))), ru))
	}
	if len(lines) == 0 {
		return chatReply(lastUserText(msgs))
	}
	footer := "_I'm the offline demo model: the values above come from threadwright's real tools; only the wording is canned._"
	if ru {
		footer = "_Я офлайн-демомодель: значения выше дали настоящие инструменты threadwright, заготовлены только формулировки._"
	}
	return strings.Join(lines, "\n") + "\n\n" + footer
}

func toolLine(tc openai.ToolCall, result string, ru bool) string {
	name := tc.Function.Name
	if msg, ok := strings.CutPrefix(result, "error:"); ok {
		if ru {
			return fmt.Sprintf("Инструмент `%s` не сработал: %s", name, strings.TrimSpace(msg))
		}
		return fmt.Sprintf("The `%s` tool failed: %s", name, strings.TrimSpace(msg))
	}
	switch name {
	case "current_time":
		if line, ok := timeLine(result, ru); ok {
			return line
		}
	case searchKnowledgeTool:
		return knowledgeLine(result, ru)
	case "calculate":
		var args struct {
			Expression string `json:"expression"`
		}
		_ = json.Unmarshal([]byte(tc.Function.Arguments), &args)
		return fmt.Sprintf("`%s` = **%s**", args.Expression, result) // the same in every language
	}
	if ru {
		return fmt.Sprintf("Инструмент `%s` ответил: %s", name, cutRunes(oneLine(result), 300))
	}
	return fmt.Sprintf("The `%s` tool says: %s", name, cutRunes(oneLine(result), 300))
}

var (
	ruWeekdays = map[string]string{
		"Monday": "понедельник", "Tuesday": "вторник", "Wednesday": "среда", "Thursday": "четверг",
		"Friday": "пятница", "Saturday": "суббота", "Sunday": "воскресенье",
	}
	ruMonths = strings.NewReplacer(
		"January", "января", "February", "февраля", "March", "марта", "April", "апреля", "May", "мая",
		"June", "июня", "July", "июля", "August", "августа", "September", "сентября", "October", "октября",
		"November", "ноября", "December", "декабря")
)

// timeLine reads current_time's result, "2024-05-14T11:30:00+02:00 (Tuesday, 14 May
// 2024, 11:30 CEST, Europe/Paris)".
func timeLine(result string, ru bool) (string, bool) {
	i := strings.Index(result, " (")
	if i < 0 || !strings.HasSuffix(result, ")") {
		return "", false
	}
	parts := strings.Split(result[i+2:len(result)-1], ", ")
	if len(parts) != 4 {
		return "", false
	}
	weekday, date, clock, zone := parts[0], parts[1], parts[2], parts[3]
	if ru {
		return fmt.Sprintf("Сейчас **%s**, %s, %s (%s).", clock, orDefault(ruWeekdays[weekday], weekday), ruMonths.Replace(date), zone), true
	}
	return fmt.Sprintf("It's **%s** on %s, %s (%s).", clock, weekday, date, zone), true
}

// isRussian reports whether s is written mostly in Cyrillic letters.
func isRussian(s string) bool {
	cyr, lat := 0, 0
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Cyrillic, r):
			cyr++
		case unicode.IsLetter(r) && r < 0x250:
			lat++
		}
	}
	return cyr > 0 && cyr >= lat
}

var (
	greetings = []string{"hi", "hello", "hey", "good morning", "good afternoon", "good evening", "привет", "здравствуй", "добрый день", "доброе утро", "добрый вечер"}
	helpWords = []string{"help", "what can you do", "who are you", "what are you", "how does this work", "помощь", "помоги", "что ты умеешь", "что умеешь", "кто ты", "как это работает"}
	thanks    = []string{"thank", "thanks", "cheers", "спасибо", "благодарю"}
)

// chatReply is the demo's answer to a message it cannot really answer.
func chatReply(q string) string {
	ru := isRussian(q)
	low := strings.ToLower(oneLine(q))
	words := tokens(low)
	first := ""
	if len(words) > 0 {
		first = words[0]
	}
	var lead string
	switch {
	case q == "":
		lead = pick2(ru, "Hi! I'm threadwright's **offline demo model**.", "Привет! Я **офлайн-демомодель** threadwright.")
	case containsAny(low, helpWords):
		lead = pick2(ru,
			"I'm threadwright's **offline demo model**: I run without a network or an API key, so my answers are canned. Here is what you can try.",
			"Я **офлайн-демомодель** threadwright: работаю без сети и без API-ключа, поэтому мои ответы заготовлены заранее. Вот что можно попробовать.")
	case slices.Contains(greetings, first) || containsAny(low, greetings[3:]):
		lead = pick2(ru,
			"Hi! I'm threadwright's **offline demo model**: no network, no API key, canned answers.",
			"Привет! Я **офлайн-демомодель** threadwright: без сети, без API-ключа, с заготовленными ответами.")
	case containsAny(low, thanks):
		lead = pick2(ru, "You're welcome!", "Пожалуйста!")
	default:
		lead = pick2(ru,
			fmt.Sprintf("I'm threadwright's **offline demo model**, so I can't really answer “%s”: there is no language model behind me, only canned replies. Set `OPENAI_API_KEY` (or `OPENAI_BASE_URL` for a local server) to get real answers.", cutRunes(oneLine(q), 80)),
			fmt.Sprintf("Я **офлайн-демомодель** threadwright, поэтому по-настоящему ответить на «%s» не могу: за мной нет языковой модели, только заготовленные ответы. Задайте `OPENAI_API_KEY` (или `OPENAI_BASE_URL` для локального сервера), чтобы получать настоящие ответы.", cutRunes(oneLine(q), 80)))
	}
	tips := pick2(ru,
		"What works offline:\n- `/threadwright start product-brief`: decide a product brief step by step, with options to pick, reviews, changes and a final report;\n- `/threadwright start proposal`: write a grant proposal the same way;\n- `/threadwright start blog`: pick an outline, then watch a blog article researched and drafted section by section;\n- ask *what time is it?* or *what is 17 * 23?* to watch a tool call.",
		"Что работает без сети:\n- `/threadwright start product-brief`: продуктовый бриф шаг за шагом, с вариантами на выбор, проверкой, правками и итоговым отчётом;\n- `/threadwright start proposal`: так же пишется заявка на грант;\n- `/threadwright start blog`: выберите план, и статья для блога будет исследована и написана раздел за разделом;\n- спросите *который час?* или *сколько будет 17 * 23?*, чтобы увидеть вызов инструмента.")
	return lead + "\n\n" + tips
}

func pick2(ru bool, en, rus string) string {
	if ru {
		return rus
	}
	return en
}

// --- The summarizer ---

var maxCharsRe = regexp.MustCompile(`At most (\d+) characters`)

// threadSummary folds the summarizer's messages into a short extractive summary: the
// previous summary's lines, then one line per new message.
func threadSummary(msgs []openai.ChatCompletionMessage) string {
	system := messageText(msgs[0])
	ru := strings.Contains(system, "Write the summary in Russian")
	limit := 4000
	if m := maxCharsRe.FindStringSubmatch(system); m != nil {
		limit, _ = strconv.Atoi(m[1])
	}
	user := lastUserText(msgs)
	var lines []string
	if prev := quotedAfter(user, "Previous summary:"); prev != "" {
		for _, l := range strings.Split(prev, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				lines = append(lines, l)
			}
		}
	}
	i := strings.Index(user, "New messages, oldest first:")
	if i >= 0 {
		body := user[i:]
		var header string
		var quote []string
		flush := func() {
			if header != "" && len(quote) > 0 {
				lines = append(lines, summaryLine(header, strings.Join(quote, " "), ru))
			}
			header, quote = "", nil
		}
		for _, l := range strings.Split(body, "\n")[1:] {
			switch {
			case strings.HasPrefix(l, ">"):
				quote = append(quote, strings.TrimSpace(strings.TrimPrefix(l, ">")))
			case strings.HasSuffix(strings.TrimSpace(l), ":"):
				flush()
				header = strings.TrimSpace(l)
			}
		}
		flush()
	}
	if len(lines) == 0 {
		return pick2(ru, "Nothing new to summarize.", "Нового для сводки нет.")
	}
	for len(lines) > 1 && utf8.RuneCountInString(strings.Join(lines, "\n")) > limit {
		lines = lines[1:]
	}
	return cutRunes(strings.Join(lines, "\n"), limit)
}

func summaryLine(header, text string, ru bool) string {
	excerpt := cutRunes(firstSentences(oneLine(text), 1), 160)
	switch {
	case strings.HasPrefix(header, "The assistant"):
		return pick2(ru, "- The assistant replied: ", "- Ассистент ответил: ") + excerpt
	default:
		author, _, _ := strings.Cut(header, " wrote")
		if author == "" || author == "Someone" {
			author = pick2(ru, "Someone", "Кто-то")
		}
		return "- " + author + ": " + excerpt
	}
}

// --- Text helpers ---

func wantsShorter(instr string) bool {
	return containsAny(strings.ToLower(instr), []string{
		"short", "brief", "concise", "trim", "tighter", "fewer words", "less text", "condense",
		"короче", "сократ", "кратк", "покороче", "меньше текста",
	})
}

func wantsLonger(instr string) bool {
	return containsAny(strings.ToLower(instr), []string{
		"longer", "more detail", "expand", "elaborate", "detailed", "flesh out",
		"подробн", "длиннее", "расширь", "дополни",
	})
}

// shorten returns about half of text: its first blocks (paragraphs, lists, tables
// kept whole) that fit, or the first sentences of its first paragraph.
func shorten(text string) string {
	text = strings.TrimSpace(text)
	total := utf8.RuneCountInString(text)
	target := total / 2
	blocks := strings.Split(text, "\n\n")
	out := []string{}
	n := 0
	for _, b := range blocks {
		size := utf8.RuneCountInString(b)
		if len(out) > 0 && n+size > target {
			break
		}
		out = append(out, b)
		n += size + 2
	}
	s := strings.Join(out, "\n\n")
	if utf8.RuneCountInString(s) <= target+target/4 {
		return s
	}
	// The first block alone is too long: keep its first lines or sentences.
	first := out[0]
	if strings.Contains(first, "\n") && !strings.Contains(first, "|") {
		lines := strings.Split(first, "\n")
		keep := []string{lines[0]}
		n = utf8.RuneCountInString(lines[0])
		for _, l := range lines[1:] {
			if n+utf8.RuneCountInString(l) > target {
				break
			}
			keep = append(keep, l)
			n += utf8.RuneCountInString(l) + 1
		}
		if len(keep) < len(lines) {
			return strings.Join(keep, "\n")
		}
	}
	for k := 3; k >= 1; k-- {
		if s := firstSentences(first, k); utf8.RuneCountInString(s) <= target || k == 1 {
			if utf8.RuneCountInString(s) < total {
				return s
			}
		}
	}
	return cutRunes(first, max(target, 20))
}

var sentenceEndRe = regexp.MustCompile(`[.!?…](\*\*|_|["”»)])*\s`)

// firstSentences returns the first n sentences of s.
func firstSentences(s string, n int) string {
	s = strings.TrimSpace(s)
	rest, end := s, 0
	for i := 0; i < n; i++ {
		loc := sentenceEndRe.FindStringIndex(rest)
		if loc == nil {
			return s
		}
		end += loc[1]
		rest = rest[loc[1]:]
	}
	return strings.TrimSpace(s[:end])
}

// sentence returns s as one line ending with a full stop, or "".
func sentence(s string) string {
	s = oneLine(s)
	if s == "" {
		return ""
	}
	if !strings.ContainsAny(s[len(s)-1:], ".!?") {
		s += "."
	}
	return s
}

// upperFirst returns s with its first letter in upper case.
func upperFirst(s string) string {
	r, size := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[size:]
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// trimEnd removes closing punctuation.
func trimEnd(s string) string { return strings.TrimRight(strings.TrimSpace(s), ".!?…;:, ") }

// cutRunes cuts s to at most n runes, marking a cut with "…".
func cutRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return strings.TrimRightFunc(string([]rune(s)[:n-1]), unicode.IsSpace) + "…"
}

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

// --- JSON schemas ---

// schemaOf decodes a function's parameters schema.
func schemaOf(fn *openai.FunctionDefinition) map[string]any {
	if fn == nil || fn.Parameters == nil {
		return nil
	}
	var b []byte
	switch p := fn.Parameters.(type) {
	case json.RawMessage:
		b = p
	case []byte:
		b = p
	case string:
		b = []byte(p)
	default:
		var err error
		if b, err = json.Marshal(p); err != nil {
			return nil
		}
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m
}

// prop returns the schema of property name of an object schema s ("" returns s).
func prop(s map[string]any, name string) map[string]any {
	if name == "" {
		return s
	}
	props, _ := s["properties"].(map[string]any)
	p, _ := props[name].(map[string]any)
	return p
}

func itemsOf(s map[string]any) map[string]any {
	it, _ := s["items"].(map[string]any)
	return it
}

// enumOf returns the non-empty string values of a schema's enum.
func enumOf(s map[string]any) []string {
	vals, _ := s["enum"].([]any)
	var out []string
	for _, v := range vals {
		if str, ok := v.(string); ok && str != "" {
			out = append(out, str)
		}
	}
	return out
}

func intOf(v any, def int) int {
	if f, ok := v.(float64); ok && f > 0 {
		return int(f)
	}
	return def
}

// example returns a value valid for schema s: the first enum value, true, the
// minimum, minItems elements, every property of an object.
func example(s map[string]any, name string) any {
	if vals, ok := s["enum"].([]any); ok && len(vals) > 0 {
		for _, v := range vals {
			if str, ok := v.(string); !ok || str != "" {
				return v
			}
		}
		return vals[0]
	}
	typ, _ := s["type"].(string)
	if types, ok := s["type"].([]any); ok && len(types) > 0 {
		typ, _ = types[0].(string)
	}
	switch typ {
	case "boolean":
		return true
	case "integer", "number":
		if f, ok := s["minimum"].(float64); ok {
			return f
		}
		return 1
	case "array":
		n := intOf(s["minItems"], 1)
		out := make([]any, n)
		for i := range out {
			out[i] = example(itemsOf(s), fmt.Sprintf("%s %d", name, i+1))
		}
		return out
	case "object", "":
		props, _ := s["properties"].(map[string]any)
		if typ == "" && props == nil {
			return "Offline demo value for " + name + "."
		}
		keys := make([]string, 0, len(props))
		for k := range props {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := map[string]any{}
		for _, k := range keys {
			p, _ := props[k].(map[string]any)
			out[k] = example(p, k)
		}
		return out
	}
	return "Offline demo value for " + name + "."
}
