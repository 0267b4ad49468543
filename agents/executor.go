package agents

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/prompts"
)

// Defaults of ExecutorConfig.
const (
	DefaultMaxSteps         = 8
	DefaultToolTimeout      = 30 * time.Second
	DefaultMaxParallelTools = 8
	DefaultMaxToolResult    = 16 << 10
)

// ExecutorConfig configures an Executor. Client and Model are required; the zero value
// of every other field picks its default.
type ExecutorConfig struct {
	// Client calls the model (a *Client).
	Client Completer
	// Model is the main model's name (OPENAI_MODEL), the request's "model".
	Model string
	// Registry holds the tools offered to the model; nil offers none.
	Registry *Registry
	// Prompts renders the system prompt and the final-answer request; default
	// prompts.MustParse().
	Prompts *prompts.Set
	// MaxSteps bounds the model calls that may ask for tools in one turn (default
	// DefaultMaxSteps, 8). When it is reached, one more call without tools asks for the
	// best answer so far and the findings are marked Truncated.
	MaxSteps int
	// TokenBudget, when positive, also ends the tool loop that way once a turn's
	// prompt plus completion tokens reach it.
	TokenBudget int
	// ToolTimeout bounds one tool run whose ToolSpec sets no Timeout (default
	// DefaultToolTimeout, 30 s).
	ToolTimeout time.Duration
	// MaxParallelTools bounds how many tool calls of one model response run at once
	// (default DefaultMaxParallelTools).
	MaxParallelTools int
	// MaxToolResult bounds the bytes of a tool result sent to the model; longer results
	// are cut and marked (default DefaultMaxToolResult, 16 KiB).
	MaxToolResult int
	// Now gives the date in the system prompt; default time.Now.
	Now func() time.Time
	// Logger receives tool failures (warning) and panics (error); default slog.Default().
	Logger *slog.Logger
}

// Executor is the ReAct executor (docs/architecture.md, "Assistant pipeline"): one
// tool-calling loop in which the model chooses the tools, the tools of one response run
// in parallel, and a tool's failure goes back to the model as its result. It implements
// conversation.Executor and is safe for concurrent use.
type Executor struct {
	client      Completer
	model       string
	registry    *Registry
	tools       toolRunner
	prompts     *prompts.Set
	maxSteps    int
	tokenBudget int
	now         func() time.Time
	logger      *slog.Logger
}

var _ conversation.Executor = (*Executor)(nil)

// NewExecutor returns an Executor for cfg, filling in defaults. It panics when
// cfg.Client is nil or cfg.Model is empty (a wiring mistake).
func NewExecutor(cfg ExecutorConfig) *Executor {
	if cfg.Client == nil || cfg.Model == "" {
		panic("agents: NewExecutor needs ExecutorConfig.Client and Model")
	}
	e := &Executor{
		client:      cfg.Client,
		model:       cfg.Model,
		registry:    cfg.Registry,
		prompts:     cfg.Prompts,
		maxSteps:    orDefault(cfg.MaxSteps, DefaultMaxSteps),
		tokenBudget: cfg.TokenBudget,
		now:         cfg.Now,
		logger:      cfg.Logger,
	}
	if e.registry == nil {
		e.registry = NewRegistry()
	}
	e.tools = toolRunner{
		registry:    e.registry,
		timeout:     orDefault(cfg.ToolTimeout, DefaultToolTimeout),
		maxParallel: orDefault(cfg.MaxParallelTools, DefaultMaxParallelTools),
		maxResult:   orDefault(cfg.MaxToolResult, DefaultMaxToolResult),
	}
	e.prompts = orPrompts(e.prompts)
	if e.now == nil {
		e.now = time.Now
	}
	e.logger = orLogger(e.logger)
	return e
}

// Execute answers p: it calls the model with the tools (tool_choice "auto") until the
// model answers without tool calls, running each response's tool calls in parallel
// and feeding their results back. progress, if not nil, is told which tools run.
// p.AnswerSink, if not nil, is given the model's text as it streams (WithTextSink),
// and Reset when a completion calls tools, so that what it holds at the end is the
// answer.
//
// The findings are Truncated when the answer was cut off (finish_reason "length": the
// partial text is kept) or the step bound or token budget ended the loop. An empty
// model response is retried once, then fails with ErrEmptyResponse. On error the
// returned Findings hold what was done so far (steps, tool calls, usage); errors are
// the model client's (see Client.Complete) or ctx's, checked between steps.
func (e *Executor) Execute(ctx context.Context, p conversation.Prompt, progress conversation.Progress) (conversation.Findings, error) {
	var f conversation.Findings
	if progress == nil {
		progress = func(string) {}
	}
	log := e.logger.With(slog.String("conversation", p.Key.String()))
	msgs, err := e.messages(p)
	if err != nil {
		return f, err
	}
	tools := e.registry.OpenAITools()

	for step := 0; step < e.maxSteps; step++ {
		if e.tokenBudget > 0 && f.Usage.PromptTokens+f.Usage.CompletionTokens >= e.tokenBudget {
			log.InfoContext(ctx, "token budget reached", slog.Int("budget", e.tokenBudget))
			break
		}
		if err := ctx.Err(); err != nil {
			return f, fmt.Errorf("agents: executor: %w", err)
		}
		req := openai.ChatCompletionRequest{Model: e.model, Messages: msgs, Tools: tools}
		if len(tools) > 0 {
			req.ToolChoice = "auto"
		}
		comp, err := e.complete(ctx, log, req, &f, false, p.AnswerSink)
		if err != nil {
			return f, err
		}
		if comp.Truncated || len(comp.ToolCalls) == 0 {
			f.Answer = comp.Content
			f.Truncated = comp.Truncated
			return f, nil
		}
		if p.AnswerSink != nil && comp.Content != "" {
			p.AnswerSink.Reset() // text written before tool calls is not the answer
		}

		progress(runningStatus(comp.ToolCalls))
		results := e.tools.runAll(ctx, log, comp.ToolCalls)
		msgs = append(msgs, comp.Message())
		for i, tc := range comp.ToolCalls {
			msgs = append(msgs, openai.ChatCompletionMessage{
				Role:       openai.ChatMessageRoleTool,
				ToolCallID: tc.ID,
				Content:    results[i].Result,
			})
		}
		f.ToolCalls = append(f.ToolCalls, results...)
		collectEntities(&f, results)
	}

	// Out of steps (or budget): one last call without tools for the best answer.
	if err := ctx.Err(); err != nil {
		return f, fmt.Errorf("agents: executor: %w", err)
	}
	final, err := e.prompts.Render(prompts.FinalAnswer, prompts.FinalAnswerData{MaxSteps: e.maxSteps})
	if err != nil {
		return f, fmt.Errorf("agents: executor: %w", err)
	}
	msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: final})
	progress("Writing the answer…")
	comp, err := e.complete(ctx, log, openai.ChatCompletionRequest{Model: e.model, Messages: msgs}, &f, true, p.AnswerSink)
	if err != nil {
		return f, err
	}
	f.Answer = comp.Content
	f.Truncated = true
	return f, nil
}

// complete makes one model call for the loop, counting it and its usage in f. An empty
// response (one without text when needText is set) is retried once. sink, when not
// nil, is given the call's text as it streams (Reset before an asked-again call).
func (e *Executor) complete(ctx context.Context, log *slog.Logger, req openai.ChatCompletionRequest, f *conversation.Findings, needText bool, sink conversation.TextSink) (Completion, error) {
	for try := 1; ; try++ {
		if sink != nil && try > 1 {
			sink.Reset()
		}
		comp, err := e.client.Complete(WithTextSink(ctx, sink), req)
		f.Steps++
		f.Usage = f.Usage.Add(comp.Usage)
		if err == nil && strings.TrimSpace(comp.Content) == "" && (needText || len(comp.ToolCalls) == 0) {
			err = ErrEmptyResponse
		}
		if errors.Is(err, ErrEmptyResponse) && try == 1 {
			log.WarnContext(ctx, "empty model response; asking again", slog.Int("step", f.Steps))
			continue
		}
		if err != nil {
			return comp, fmt.Errorf("agents: executor step %d: %w", f.Steps, err)
		}
		return comp, nil
	}
}

// messages builds the conversation for the model: the system prompt (with the summary,
// if any), the history and the request.
func (e *Executor) messages(p conversation.Prompt) ([]openai.ChatCompletionMessage, error) {
	system, err := e.prompts.Render(prompts.ExecutorSystem, prompts.ExecutorSystemData{
		Date:       e.now().UTC().Format("Monday, 2 January 2006 (MST)"),
		Categories: promptCategories(e.registry.Categories()),
		Summary:    p.Summary,
	})
	if err != nil {
		return nil, fmt.Errorf("agents: executor: %w", err)
	}
	msgs := make([]openai.ChatCompletionMessage, 0, len(p.History)+2)
	msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: system})
	msgs = appendHistory(msgs, p.History)
	if m := sessionMessage(p.Entities); m != nil {
		msgs = append(msgs, *m)
	}
	msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: p.Text})
	return msgs, nil
}

// appendHistory appends a conversation's stored messages as chat messages: users' as
// "user", the bot's as "assistant", and thread context as "user" messages that say
// whose earlier message they are.
func appendHistory(msgs []openai.ChatCompletionMessage, history []conversation.Message) []openai.ChatCompletionMessage {
	for _, m := range history {
		if strings.TrimSpace(m.Text) == "" {
			continue
		}
		switch m.Role {
		case conversation.RoleUser:
			msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: m.Text})
		case conversation.RoleAssistant:
			msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: m.Text})
		case conversation.RoleContext:
			msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: contextMessage(m)})
		}
	}
	return msgs
}

// contextMessage labels a thread message from before the bot joined.
func contextMessage(m conversation.Message) string {
	author := "someone"
	if m.UserID != "" {
		author = "<@" + m.UserID + ">"
	}
	return fmt.Sprintf("[Earlier thread context: a message %s posted before you were asked; background, not a request to you]\n%s", author, m.Text)
}

func promptCategories(cats []ToolCategory) []prompts.ToolCategory {
	out := make([]prompts.ToolCategory, len(cats))
	for i, c := range cats {
		out[i].Name = c.Name
		for _, t := range c.Tools {
			out[i].Tools = append(out[i].Tools, prompts.Tool{Name: t.Name, Description: t.Description})
		}
	}
	return out
}

// runningStatus is the progress line for a set of tool calls: "Running a, b…".
func runningStatus(calls []openai.ToolCall) string {
	var names []string
	seen := map[string]bool{}
	for _, tc := range calls {
		if n := tc.Function.Name; !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	return "Running " + strings.Join(names, ", ") + "…"
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "… [truncated]"
	cut := max(n-len(mark), 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}
