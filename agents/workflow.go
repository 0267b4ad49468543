package agents

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/agents/mrkdwn"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
	"github.com/threadwright/threadwright/internal/textcut"
	"github.com/threadwright/threadwright/prompts"
)

// Defaults of WorkflowAgentConfig.
const (
	// DefaultMaxReminders is how many times a model that did not commit its work is
	// reminded before the call fails with ErrNoCommit.
	DefaultMaxReminders = 2
	// DefaultWorkflowHistory is how many of the thread's newest messages the workflow
	// agent's system prompt shows.
	DefaultWorkflowHistory = 10
	// DefaultWriteToolSteps bounds the model calls of a Write with tools (see
	// WorkflowAgentConfig.MaxToolSteps).
	DefaultWriteToolSteps = 6
)

// ErrUnknownProfile means an ArtifactRequest.Profile names a model profile that
// WorkflowAgentConfig.Profiles lacks. The WorkflowAgent methods return a
// *ProfileError, which matches it with errors.Is, without calling a model.
var ErrUnknownProfile = errors.New("agents: model profile is not configured")

// ProfileError is the error of a WorkflowAgent call whose ArtifactRequest.Profile
// names a profile that is not configured: `agents: model profile "fast" is not
// configured`. Nothing was called and the usage is zero.
type ProfileError struct {
	// Name is the profile asked for.
	Name string
}

func (e *ProfileError) Error() string {
	return fmt.Sprintf("agents: model profile %q is not configured", e.Name)
}

// Is reports whether target is ErrUnknownProfile.
func (e *ProfileError) Is(target error) bool { return target == ErrUnknownProfile }

// UserMessage returns the text to show in Slack.
func (e *ProfileError) UserMessage() string {
	return fmt.Sprintf("This workflow asks for the model profile %q, which this deployment does not configure (MODEL_PROFILES), so nothing was written.", e.Name)
}

// Profile is a named model configuration: a workflow artifact's `model:` (or its
// editor's) names one, and the deployment configures them by name from
// MODEL_PROFILES. A call whose ArtifactRequest.Profile names it goes to Client with
// Model as the request's "model".
type Profile struct {
	// Client calls the profile's model (a *Client, perhaps for another
	// OpenAI-compatible server); default WorkflowAgentConfig.Client.
	Client Completer
	// Model is the model's name. Required.
	Model string
}

// WorkflowAgentConfig configures a WorkflowAgent. Client and Model are required; the
// zero value of every other field picks its default.
type WorkflowAgentConfig struct {
	// Client calls the models (a *Client).
	Client Completer
	// Model is the main model (OPENAI_MODEL): it proposes options, writes, revises,
	// evaluates and summarizes.
	Model string
	// SmallModel (OPENAI_SMALL_MODEL) reads people's replies to options messages
	// (InterpretReply); default Model.
	SmallModel string
	// Prompts renders the prompts; default prompts.MustParse().
	Prompts *prompts.Set
	// MaxReminders is how many times a model that did not commit its work (no call of
	// the commit function, or a call with invalid arguments) is told so and asked
	// again, before the method fails with ErrNoCommit: a method makes at most
	// 1 + MaxReminders model calls. Default DefaultMaxReminders (2); negative: none.
	MaxReminders int
	// History is how many of the thread's newest messages (ArtifactRequest.History)
	// the prompts show (default DefaultWorkflowHistory; negative: none).
	History int
	// Profiles are the model profiles a request may name (ArtifactRequest.Profile),
	// by name, from MODEL_PROFILES; nil: none, and a request that names one fails
	// with a *ProfileError.
	Profiles map[string]Profile
	// Tools holds the tools an artifact may name (workflow.Artifact.Tools) for the
	// model to call while it writes (Write); the artifact's tools missing here are
	// left out. Nil: none. The executor's Registry is the usual choice.
	Tools *Registry
	// Policy narrows an artifact's tools to those its channel may use
	// (ArtifactRequest.ChannelID; TOOL_POLICY): the tools offered are the
	// intersection. Nil: the artifact's list alone.
	Policy *ToolPolicy
	// ToolTimeout bounds one tool run whose ToolSpec sets no Timeout (default
	// DefaultToolTimeout, 30 s).
	ToolTimeout time.Duration
	// MaxToolSteps bounds the model calls of a Write with tools (default
	// DefaultWriteToolSteps, 6): the first MaxToolSteps-1 offer the tools and the
	// commit function, the last offers and forces the commit function alone (then the
	// usual reminders). 1 or negative: tools are never offered.
	MaxToolSteps int
	// Logger receives a warning for every reminder, and tool calls and tools left out
	// at debug level; default slog.Default().
	Logger *slog.Logger
}

// WorkflowAgent writes and judges the artifacts of workflows (docs/architecture.md,
// "Workflow machine"). It implements conversation.WorkflowAgent and is safe for
// concurrent use.
//
// Every method makes one model request with a system prompt (template
// prompts.WorkflowSystem: the workflow, the artifact with its mode, guidance and
// criteria, the approved artifacts, the language, the format and the commit
// function), a task (one of the artifact templates) and a single tool, the method's
// commit function, which tool_choice forces ({"type": "function", "function":
// {"name": …}}). The model writes plain text; what it passes to the commit function is
// the result. When it answers without calling the function (a server that ignores
// tool_choice, or a weak model), or with arguments that are rejected (invalid JSON, the
// wrong number of options, an empty text), the answer and a reminder that says what
// was wrong (template prompts.CommitReminder) are appended and the request is sent
// again, at most MaxReminders times; then the method returns a *CommitError
// (ErrNoCommit) and nothing. Usage is the sum over every call, failed tries included.
// Other errors are the model client's (see Client.Complete), wrapped, with the usage
// so far.
//
// A request with a Profile goes to that profile's client and model (Profiles), for
// every method, InterpretReply included: the engine names the profile of whoever
// works on the artifact. An unknown profile fails with a *ProfileError before any
// call.
//
// For a foreach artifact the engine calls Write and Revise once per item
// (ArtifactRequest.Item): the task shows the line "Item <n> of <total>: <title>" (n
// from 1) and the item's brief, and asks for that item's part only, without its
// heading. For an automated write (an item, or an artifact of mode auto),
// commit_artifact_final_text also offers "failure", and a model that sets it with an
// empty text makes Write or Revise return a *conversation.TaskFailure (wrapped): the
// engine retries, calling Recover before the last try.
//
// A Write whose artifact names tools (workflow.Artifact.Tools) that Tools has is a
// bounded ReAct loop: see Write.
type WorkflowAgent struct {
	client       Completer
	model        string
	smallModel   string
	profiles     map[string]Profile
	tools        *Registry
	policy       *ToolPolicy
	toolTimeout  time.Duration
	maxToolSteps int
	prompts      *prompts.Set
	maxReminders int
	history      int
	logger       *slog.Logger
}

var _ conversation.WorkflowAgent = (*WorkflowAgent)(nil)

// NewWorkflowAgent returns a WorkflowAgent for cfg, filling in defaults. It panics when
// cfg.Client is nil, cfg.Model is empty or a profile has no Model (a wiring mistake).
func NewWorkflowAgent(cfg WorkflowAgentConfig) *WorkflowAgent {
	if cfg.Client == nil || cfg.Model == "" {
		panic("agents: NewWorkflowAgent needs WorkflowAgentConfig.Client and Model")
	}
	a := &WorkflowAgent{
		client:       cfg.Client,
		model:        cfg.Model,
		smallModel:   cmp.Or(cfg.SmallModel, cfg.Model),
		profiles:     make(map[string]Profile, len(cfg.Profiles)),
		tools:        cfg.Tools,
		policy:       cfg.Policy,
		toolTimeout:  cmp.Or(cfg.ToolTimeout, DefaultToolTimeout),
		maxToolSteps: max(cmp.Or(cfg.MaxToolSteps, DefaultWriteToolSteps), 1),
		prompts:      cfg.Prompts,
		maxReminders: max(cmp.Or(cfg.MaxReminders, DefaultMaxReminders), 0),
		history:      max(cmp.Or(cfg.History, DefaultWorkflowHistory), 0),
		logger:       cfg.Logger,
	}
	for name, p := range cfg.Profiles {
		if p.Model == "" {
			panic(fmt.Sprintf("agents: NewWorkflowAgent: model profile %q has no Model", name))
		}
		if p.Client == nil {
			p.Client = cfg.Client
		}
		a.profiles[name] = p
	}
	a.prompts = orPrompts(a.prompts)
	a.logger = cmp.Or(a.logger, slog.Default())
	return a
}

// ProposeOptions proposes the options of a choice artifact: exactly
// r.Artifact.Options of them (workflow.DefaultOptions when unset, at most
// workflow.MaxOptions), committed with commit_artifact_options. Options already in
// r.Options are shown to the model as ones to differ from (a regeneration), and
// r.Instructions as the team's guidance. The options are labelled A, B, C… by
// position, whatever labels the model gave; a title is cut to 60 characters (it is
// shown on a button) and an empty one is made from the text's first words. Rejected,
// with a reminder: the wrong number of options, an option without text, two options
// with the same text.
func (a *WorkflowAgent) ProposeOptions(ctx context.Context, r conversation.ArtifactRequest) ([]workflow.Option, conversation.Usage, error) {
	if err := checkRequest(r, true); err != nil {
		return nil, conversation.Usage{}, fmt.Errorf("agents: propose options: %w", err)
	}
	n := optionCount(r.Artifact)
	labels := optionLabels(n)
	data := prompts.ArtifactOptionsData{
		Title: r.Artifact.Title, Count: n, Labels: labels,
		Instructions: strings.TrimSpace(r.Instructions), ToolName: CommitOptionsTool,
	}
	for _, o := range r.Options {
		data.Previous = append(data.Previous, prompts.Option{Label: o.Label, Title: o.Title, Text: textcut.BytesMark(oneLine(o.Text), maxPreviousOption, textcut.Truncated)})
	}
	for _, o := range r.Review { // self_review: the options just proposed
		data.Review = append(data.Review, prompts.Option{Label: o.Label, Title: o.Title, Text: textcut.BytesMark(oneLine(o.Text), maxReviewOption, textcut.Truncated)})
	}
	if len(data.Review) > 0 {
		for _, c := range r.Artifact.Criteria {
			data.Criteria = append(data.Criteria, prompts.Criterion{ID: c.ID, Description: c.Description, Critical: c.Critical})
		}
	}
	var out []workflow.Option
	t := task{
		name: "propose options", model: a.model, tool: optionsTool(labels),
		prompt: prompts.ArtifactOptions, data: data, context: fullContext,
		accept: func(args json.RawMessage) (err error) {
			out, err = parseOptions(args, labels)
			return err
		},
		userMessage: NotSaved("the options for " + mrkdwn.Escape(r.Artifact.Title)),
	}
	u, err := a.run(ctx, r, t)
	if err != nil {
		return nil, u, err
	}
	return out, u, nil
}

// InterpretReply reads a person's reply to the options message of r.Options with the
// small model (commit_artifact_selection): which option it chooses, by letter (in
// any case, or a Cyrillic letter: А → A, Б and В → B, С → C, Г → D, Д → E), position,
// title or content, with what changes ("B, but shorter" → B, "shorter"), or whether it
// asks for new options ("none of these, more playful" → Regenerate, "more playful").
// A reply that is nothing but a label ("B", "b.", "option B", "Б", "2") is read
// without a model call. A label the model gives is mapped the same way to one of
// r.Options' labels; one that matches none is rejected with a reminder. When the
// model sets both a label and regenerate, Regenerate wins and the label becomes part
// of the instructions. A reply that neither chooses nor asks for new options gives the
// zero Selection.
func (a *WorkflowAgent) InterpretReply(ctx context.Context, r conversation.ArtifactRequest, reply string) (conversation.Selection, conversation.Usage, error) {
	if err := checkRequest(r, true); err != nil {
		return conversation.Selection{}, conversation.Usage{}, fmt.Errorf("agents: interpret reply: %w", err)
	}
	if label, ok := resolveLabel(reply, r.Options); ok {
		return conversation.Selection{Label: label}, conversation.Usage{}, nil
	}
	labels := make([]string, len(r.Options))
	data := prompts.ArtifactSelectionData{Title: r.Artifact.Title, Reply: strings.TrimSpace(reply), ToolName: CommitSelectionTool}
	for i, o := range r.Options {
		labels[i] = o.Label
		data.Options = append(data.Options, prompts.Option{Label: o.Label, Title: o.Title, Text: textcut.BytesMark(oneLine(o.Text), maxPreviousOption, textcut.Truncated)})
	}
	data.Labels = labels
	var out conversation.Selection
	t := task{
		name: "interpret reply", model: a.smallModel, tool: selectionTool(labels),
		prompt: prompts.ArtifactSelection, data: data, context: briefContext,
		accept: func(args json.RawMessage) (err error) {
			out, err = parseSelection(args, r.Options)
			return err
		},
		userMessage: func(tries int) string {
			return fmt.Sprintf("The model could not work out what your reply means after %d %s, so nothing was changed. Pick an option with its button, or reply again.", tries, plural(tries, "try", "tries"))
		},
	}
	u, err := a.run(ctx, r, t)
	if err != nil {
		return conversation.Selection{}, u, err
	}
	return out, u, nil
}

// Write writes the artifact's text (commit_artifact_final_text): from r.Selected for a
// choice artifact, from scratch otherwise, following r.Instructions; r.Current, when
// set, is shown as an earlier version. With r.Item, it writes that item's part only
// (see WorkflowAgent). The text is returned trimmed; an empty one is rejected with a
// reminder, unless the write is automated and the model set "failure" instead: then
// the error is a *conversation.TaskFailure with the model's reason (no reminder), and
// a call that sets both is rejected with a reminder.
//
// Tools: when r.Artifact.Tools names tools that WorkflowAgentConfig.Tools has (the
// others are left out, logged at debug level), the task lists them and the first
// MaxToolSteps-1 model calls offer them with the commit function, tool_choice
// "required". The tool calls of a response run in parallel, each under its timeout;
// their results (a failure as "error: …") are appended as "tool" messages and the
// model is called again. A call of the commit function with accepted arguments ends
// the loop at any step; the MaxToolSteps-th call offers and forces the commit
// function alone, and the reminders follow as usual. A response without any tool call
// counts as a failed try (a reminder), like one whose only call is a rejected commit.
//
// A call that needs a person's confirmation (docs/tools.md, "Tool policy") is refused
// with an error result, unless r.Ask: then Write stops before it and returns a
// *conversation.ConfirmationNeeded, and is called again with r.Resume to go on.
func (a *WorkflowAgent) Write(ctx context.Context, r conversation.ArtifactRequest) (string, conversation.Usage, error) {
	if err := checkRequest(r, true); err != nil {
		return "", conversation.Usage{}, fmt.Errorf("agents: write: %w", err)
	}
	tools, missing := a.artifactTools(ctx, r)
	data := prompts.ArtifactWriteData{
		Title: r.Artifact.Title, Item: itemData(r.Item), Previous: strings.TrimSpace(r.Current),
		Instructions: strings.TrimSpace(r.Instructions), Failure: automated(r), ToolName: CommitFinalTextTool,
		Unavailable: missing,
	}
	if s := r.Selected; s != nil {
		data.Selected = &prompts.Option{Label: s.Label, Title: s.Title, Text: s.Text}
	}
	for _, it := range r.Batch {
		data.Batch = append(data.Batch, *itemData(&it))
	}
	var seed []openai.ToolCall
	if tools != nil {
		data.Tools = promptTools(tools.Specs())
		seed, data.Searched = approvedSearches(tools, approvedQueries(r))
	}
	t := task{name: "write", prompt: prompts.ArtifactWrite, data: data, tools: tools, seed: seed, userMessage: NotSaved("the text of " + itemName(r))}
	return a.writeText(ctx, r, t)
}

// Revise rewrites r.Current following r.Instructions (commit_artifact_final_text): the
// editor agent, for a person's edit request or a workflow's editor pass (r.Item set
// for an item's text). Empty instructions ask for a general improvement. The result
// and errors are Write's ("failure" included), without tools. Errors: r.Current is
// empty (nothing to revise), without a model call.
func (a *WorkflowAgent) Revise(ctx context.Context, r conversation.ArtifactRequest) (string, conversation.Usage, error) {
	if err := checkRequest(r, true); err != nil {
		return "", conversation.Usage{}, fmt.Errorf("agents: revise: %w", err)
	}
	if strings.TrimSpace(r.Current) == "" {
		return "", conversation.Usage{}, fmt.Errorf("agents: revise %s: no current text to revise", r.Artifact.ID)
	}
	data := prompts.ArtifactReviseData{
		Title: r.Artifact.Title, Item: itemData(r.Item), Current: strings.TrimSpace(r.Current),
		Instructions: strings.TrimSpace(r.Instructions), Failure: automated(r), ToolName: CommitFinalTextTool,
	}
	t := task{name: "revise", prompt: prompts.ArtifactRevise, data: data, userMessage: NotSaved("the revised text of " + itemName(r))}
	return a.writeText(ctx, r, t)
}

// writeText runs t, a task that commits with commit_artifact_final_text, with the
// main model.
func (a *WorkflowAgent) writeText(ctx context.Context, r conversation.ArtifactRequest, t task) (string, conversation.Usage, error) {
	var out finalText
	failure := automated(r)
	t.model, t.context = a.model, fullContext
	t.tool = finalTextTool(r.Item != nil, failure)
	t.accept = func(args json.RawMessage) (err error) {
		out, err = parseFinalText(args, failure)
		return err
	}
	var failedTools []string
	t.failedTools = &failedTools
	u, err := a.run(ctx, r, t)
	if err != nil {
		return "", u, err
	}
	if out.failure != "" {
		// The model gave up; the tools that failed on the way are why, as far as
		// anyone can tell (the failure message names the first).
		return "", u, fmt.Errorf("agents: %s: %w", t.name, &conversation.TaskFailure{Reason: out.failure, Tools: failedTools})
	}
	return out.text, u, nil
}

// automated reports whether r is a write no person reviews: an item of a foreach
// artifact, or an artifact of mode auto. Only there may the model report that the
// task cannot be done ("failure"): the pipeline retries it, where a person waiting
// for a draft is better served by a text to react to.
func automated(r conversation.ArtifactRequest) bool {
	return r.Item != nil || (r.Artifact != nil && r.Artifact.Mode == workflow.ModeAuto)
}

// artifactTools returns the tools of a.tools that r.Artifact names and its channel
// allows (a.policy), or nil when there are none (or steps for them), and the names
// it left out (not configured, or not allowed), which are logged at debug level
// and named in the writer's prompt (ArtifactWriteData.Unavailable).
func (a *WorkflowAgent) artifactTools(ctx context.Context, r conversation.ArtifactRequest) (*Registry, []string) {
	names := slices.DeleteFunc(slices.Clone(r.Artifact.Tools), isCommitTool)
	if len(names) == 0 || a.maxToolSteps < 2 {
		return nil, nil
	}
	reg := a.policy.For(a.tools, r.ChannelID)
	if reg == nil {
		reg = NewRegistry()
	}
	sub, missing := reg.subset(names)
	if len(missing) > 0 {
		a.logger.DebugContext(ctx, "artifact tools not configured or not allowed in the channel; left out",
			slog.String("workflow", r.Workflow.Name), slog.String("artifact", r.Artifact.ID), slog.Any("tools", missing))
	}
	if sub.Len() == 0 {
		return nil, missing
	}
	return sub, missing
}

// Evaluate judges text against r.Artifact.Criteria with the main model
// (commit_evaluation): grading needs the stronger model, and a weak grader's false
// passes cost more than the call. It returns one result per criterion, in the
// criteria's order. Results for unknown criterion ids are dropped; a criterion the
// model left out gets Pass false and the reason "Not evaluated: …" (no reminder, so a
// partial evaluation does not cost another call); a call without a single known id is
// rejected with a reminder. Reasons are made one line of at most 300 bytes. An
// artifact without criteria returns nil without a model call.
func (a *WorkflowAgent) Evaluate(ctx context.Context, r conversation.ArtifactRequest, text string) ([]workflow.CriterionResult, conversation.Usage, error) {
	if err := checkRequest(r, true); err != nil {
		return nil, conversation.Usage{}, fmt.Errorf("agents: evaluate: %w", err)
	}
	criteria := r.Artifact.Criteria
	if len(criteria) == 0 {
		return nil, conversation.Usage{}, nil
	}
	if strings.TrimSpace(text) == "" {
		return nil, conversation.Usage{}, fmt.Errorf("agents: evaluate %s: empty text", r.Artifact.ID)
	}
	ids := make([]string, len(criteria))
	data := prompts.ArtifactEvaluateData{Title: r.Artifact.Title, Text: strings.TrimSpace(text), ToolName: CommitEvaluationTool}
	for i, c := range criteria {
		ids[i] = c.ID
		data.Criteria = append(data.Criteria, prompts.Criterion{ID: c.ID, Description: c.Description, Critical: c.Critical})
	}
	var out []workflow.CriterionResult
	t := task{
		name: "evaluate", model: a.model, tool: evaluationTool(ids),
		prompt: prompts.ArtifactEvaluate, data: data, context: judgeContext,
		accept: func(args json.RawMessage) (err error) {
			out, err = parseEvaluation(args, criteria)
			return err
		},
		userMessage: NotSaved("the evaluation of " + mrkdwn.Escape(r.Artifact.Title)),
	}
	u, err := a.run(ctx, r, t)
	if err != nil {
		return nil, u, err
	}
	return out, u, nil
}

// Summarize writes the short summary posted with the final report, from every
// approved artifact in r.Approved (commit_final_docset), with the main model.
// r.Artifact may be nil.
func (a *WorkflowAgent) Summarize(ctx context.Context, r conversation.ArtifactRequest) (string, conversation.Usage, error) {
	if err := checkRequest(r, false); err != nil {
		return "", conversation.Usage{}, fmt.Errorf("agents: summarize: %w", err)
	}
	var out string
	t := task{
		name: "summarize", model: a.model, tool: docsetTool(), prompt: prompts.DocsetSummary,
		data: prompts.DocsetSummaryData{
			Title: r.Workflow.Title, Instructions: strings.TrimSpace(r.Instructions), ToolName: CommitDocsetTool,
		},
		context: fullContext,
		accept: func(args json.RawMessage) (err error) {
			out, err = parseText(args, "summary")
			return err
		},
		userMessage: NotSaved("the summary of " + mrkdwn.Escape(r.Workflow.Title)),
	}
	u, err := a.run(ctx, r, t)
	if err != nil {
		return "", u, err
	}
	return out, u, nil
}

// run makes t's forced calls of t.tool (a CommitLoop) with its model until the model
// commits acceptable arguments or the reminders run out. With t.tools, the first
// maxToolSteps-1 calls offer them too (tool_choice "required") and their tool calls
// are run; every other call offers and forces the commit function alone.
func (a *WorkflowAgent) run(ctx context.Context, r conversation.ArtifactRequest, t task) (conversation.Usage, error) {
	client, model, err := a.route(r.Profile, t.model)
	if err != nil {
		return conversation.Usage{}, err
	}
	msgs, err := t.messages(a.prompts, r, a.history)
	if err != nil {
		return conversation.Usage{}, fmt.Errorf("agents: %s: %w", t.name, err)
	}
	log := a.logger.With(slog.String("workflow", r.Workflow.Name))
	if r.Artifact != nil {
		log = log.With(slog.String("artifact", r.Artifact.ID))
	}
	if r.Item != nil {
		log = log.With(slog.Int("item", r.Item.Index+1))
	}
	if r.Profile != "" {
		log = log.With(slog.String("profile", r.Profile))
	}
	loop := CommitLoop{
		Client: client, Model: model, Prompts: a.prompts, Tool: t.tool, Accept: t.accept,
		Reminders: a.maxReminders, Log: log, Warning: "model did not commit its work",
		ErrPrefix: "agents: " + t.name, UserMessage: t.userMessage, Tainted: r.Tainted,
	}
	if t.tools != nil {
		// Without tools (no longer configured) a resumed write starts afresh.
		loop.CanPause, loop.Resume = r.Ask, r.Resume
		loop.research = toolRunner{registry: t.tools, timeout: a.toolTimeout, maxParallel: DefaultMaxParallelTools, maxResult: DefaultMaxToolResult}
		loop.toolSteps = a.maxToolSteps
		loop.seed = t.seed
	}
	res, err := loop.Run(ctx, msgs)
	if t.failedTools != nil {
		*t.failedTools = res.FailedTools
	}
	return res.Usage, err
}

// route returns the client and model of a call for the named profile: the profile's,
// or a.client and model when profile is "". An unknown profile is a *ProfileError.
func (a *WorkflowAgent) route(profile, model string) (Completer, string, error) {
	if profile == "" {
		return a.client, model, nil
	}
	p, ok := a.profiles[profile]
	if !ok {
		return nil, "", &ProfileError{Name: profile}
	}
	return p.Client, p.Model, nil
}

// checkRequest rejects a request the methods cannot work on (a wiring mistake).
func checkRequest(r conversation.ArtifactRequest, needArtifact bool) error {
	switch {
	case r.Workflow == nil:
		return errors.New("the request has no workflow")
	case needArtifact && r.Artifact == nil:
		return errors.New("the request has no artifact")
	case r.Item != nil && (r.Item.Index < 0 || r.Item.Index >= r.Item.Total):
		return fmt.Errorf("the request's item %d is not one of %d", r.Item.Index, r.Item.Total)
	}
	return nil
}
