package agents

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/sashabaranov/go-openai/jsonschema"
	"golang.org/x/sync/errgroup"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/internal/textcut"
)

// Tool is something the model can call. Run receives the call's arguments, the JSON
// object the model wrote (already checked to be valid JSON), and returns the text the
// model reads as the result. An error is not fatal: the executor sends "error: " and
// its message to the model as the result. Run must honour ctx: it is cancelled when
// the tool's timeout expires or the turn is abandoned.
type Tool interface {
	Run(ctx context.Context, args json.RawMessage) (string, error)
}

// ToolFunc adapts an ordinary function to the Tool interface, like http.HandlerFunc.
type ToolFunc func(ctx context.Context, args json.RawMessage) (string, error)

// Run calls f(ctx, args).
func (f ToolFunc) Run(ctx context.Context, args json.RawMessage) (string, error) {
	return f(ctx, args)
}

// ToolSpec describes a tool to the model and to the executor.
type ToolSpec struct {
	// Name is the function name the model calls (OpenAI's tools[].function.name): 1 to
	// 64 characters of a-z, A-Z, 0-9, "_" and "-".
	Name string
	// Description tells the model what the tool does and when to use it
	// (tools[].function.description). Required.
	Description string
	// Category groups tools in the executor's system prompt; default "general".
	Category string
	// Parameters is the JSON schema of the arguments object
	// (tools[].function.parameters), e.g. {"type":"object","properties":{...}}.
	// Default: an object without properties. InferTool derives it from a Go struct.
	Parameters json.RawMessage
	// Timeout bounds one run of the tool; zero uses the executor's ToolTimeout.
	Timeout time.Duration

	// The tool policy's classification (docs/tools.md, "Tool policy"); the zero value is a
	// tool with side effects whose output is internal.

	// ReadOnly says the tool only reads: it changes nothing anywhere, so it runs
	// without confirmation whatever the turn has read (MCP's readOnlyHint).
	ReadOnly bool
	// NeedsApproval says every call needs the confirmation of the person who asked,
	// in Slack, before it runs (agent SDKs' needs_approval; MCP's destructiveHint, or
	// a tool without hints from a server not marked trusted). Ignored when ReadOnly.
	NeedsApproval bool
	// Untrusted says the tool's output is content from outside the organization (a
	// web page, search results, an untrusted MCP server): it is labelled
	// trust="untrusted" for the model, and once it has entered a turn every tool
	// that is not ReadOnly needs confirmation.
	Untrusted bool
	// UntrustedDescription says the tool's description and schema come from a server
	// not marked trusted (an MCP server's trusted: false): they are cut and fenced as
	// data (FenceDescription), and a turn that offers the tool is tainted from its
	// first step, as if it had read untrusted content.
	UntrustedDescription bool
}

// Why a tool call needs a person's confirmation (conversation.PendingTool.Reason).
const (
	// ApprovalDestructive: the tool is NeedsApproval.
	ApprovalDestructive = conversation.ApprovalDestructive
	// ApprovalAfterUntrusted: untrusted content entered the turn before the call,
	// and the tool is not ReadOnly.
	ApprovalAfterUntrusted = conversation.ApprovalAfterUntrusted
)

// approvalReason returns why a call of spec needs a person's confirmation, or "" when
// it may run: read-only tools always run; a NeedsApproval tool never runs
// unconfirmed; any other tool needs confirmation once tainted, that is once untrusted
// content has entered the turn.
func approvalReason(spec ToolSpec, tainted bool) string {
	switch {
	case spec.ReadOnly:
		return ""
	case spec.NeedsApproval:
		return ApprovalDestructive
	case tainted:
		return ApprovalAfterUntrusted
	}
	return ""
}

// DefaultCategory is the category of a ToolSpec that names none.
const DefaultCategory = "general"

// Errors of Registry.Register; test with errors.Is.
var (
	// ErrInvalidTool means a tool's name, description, schema or implementation is
	// unusable; the error names the tool and the problem.
	ErrInvalidTool = errors.New("agents: invalid tool")
	// ErrDuplicateTool means a tool with the same name is already registered.
	ErrDuplicateTool = errors.New("agents: duplicate tool name")
)

// toolName is the pattern of OpenAI function names.
var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

var emptyObjectSchema = json.RawMessage(`{"type":"object","properties":{}}`)

// Registry holds the tools the executor offers the model. Register tools at start-up;
// the methods are safe for concurrent use.
type Registry struct {
	mu    sync.RWMutex
	tools map[string]registered
	// sorted and openAI: Specs' and OpenAITools', made under mu's read lock; Register drops them.
	sorted atomic.Pointer[[]ToolSpec]
	openAI atomic.Pointer[[]openai.Tool]
}

type registered struct {
	spec ToolSpec
	tool Tool
}

// NewRegistry returns an empty Registry.
func NewRegistry() *Registry {
	return &Registry{tools: make(map[string]registered)}
}

// Register adds tool under spec.Name. Errors: ErrInvalidTool for a name that is not a
// valid OpenAI function name, an empty description, Parameters that are not a JSON
// object or a nil tool; ErrDuplicateTool for a name already registered.
func (r *Registry) Register(spec ToolSpec, tool Tool) error {
	if !toolName.MatchString(spec.Name) {
		return fmt.Errorf("%w: name %q must match %s", ErrInvalidTool, spec.Name, toolName)
	}
	if strings.TrimSpace(spec.Description) == "" {
		return fmt.Errorf("%w %s: empty description", ErrInvalidTool, spec.Name)
	}
	if tool == nil {
		return fmt.Errorf("%w %s: nil Tool", ErrInvalidTool, spec.Name)
	}
	if spec.Timeout < 0 {
		return fmt.Errorf("%w %s: negative timeout", ErrInvalidTool, spec.Name)
	}
	if len(bytes.TrimSpace(spec.Parameters)) == 0 {
		spec.Parameters = emptyObjectSchema
	} else {
		var schema map[string]any
		if err := json.Unmarshal(spec.Parameters, &schema); err != nil {
			return fmt.Errorf("%w %s: parameters must be a JSON schema object: %w", ErrInvalidTool, spec.Name, err)
		}
		if t, ok := schema["type"]; ok && t != "object" {
			return fmt.Errorf("%w %s: parameters must describe an object, not %v", ErrInvalidTool, spec.Name, t)
		}
		spec.Parameters = slices.Clone(spec.Parameters)
	}
	if spec.Category == "" {
		spec.Category = DefaultCategory
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	if r.tools == nil {
		r.tools = make(map[string]registered)
	}
	if _, dup := r.tools[spec.Name]; dup {
		return fmt.Errorf("%w: %s", ErrDuplicateTool, spec.Name)
	}
	r.tools[spec.Name] = registered{spec: spec, tool: tool}
	r.sorted.Store(nil)
	r.openAI.Store(nil)
	return nil
}

// MustRegister is like Register but panics on error, for start-up code.
func (r *Registry) MustRegister(spec ToolSpec, tool Tool) {
	if err := r.Register(spec, tool); err != nil {
		panic(err)
	}
}

// Lookup returns the tool called name and its spec (with defaults filled in).
func (r *Registry) Lookup(name string) (ToolSpec, Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.tools[name]
	return t.spec, t.tool, ok
}

// Len returns the number of registered tools.
func (r *Registry) Len() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.tools)
}

// Specs returns the registered tools' specs sorted by name.
func (r *Registry) Specs() []ToolSpec {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Clone(r.sortedLocked())
}

// sortedLocked returns the specs sorted by name, made once (r.sorted); r.mu is held.
func (r *Registry) sortedLocked() []ToolSpec {
	if p := r.sorted.Load(); p != nil {
		return *p
	}
	specs := make([]ToolSpec, 0, len(r.tools))
	for _, t := range r.tools {
		specs = append(specs, t.spec)
	}
	slices.SortFunc(specs, func(a, b ToolSpec) int { return strings.Compare(a.Name, b.Name) })
	r.sorted.Store(&specs)
	return specs
}

// offersUntrusted reports whether r, offered to the model, taints the turn: one of
// its tools has an UntrustedDescription. A nil r offers nothing.
func (r *Registry) offersUntrusted() bool {
	if r == nil {
		return false
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, t := range r.tools {
		if t.spec.UntrustedDescription {
			return true
		}
	}
	return false
}

// Names returns the registered tools' names, sorted.
func (r *Registry) Names() []string {
	specs := r.Specs()
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	return names
}

// OpenAITools returns the tools as a chat completion request's "tools" list, sorted by
// name (a stable order keeps the prompt cacheable). It is nil for an empty registry.
// The list is the caller's own; its FunctionDefinitions are shared: never change them.
func (r *Registry) OpenAITools() []openai.Tool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.openAI.Load() == nil {
		specs := r.sortedLocked()
		tools := make([]openai.Tool, len(specs))
		for i, s := range specs {
			tools[i] = openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: s.Name, Description: s.Description, Parameters: s.Parameters}}
		}
		r.openAI.Store(&tools)
	}
	if tools := *r.openAI.Load(); len(tools) > 0 {
		return slices.Clone(tools)
	}
	return nil
}

// subset returns a Registry of the tools of r named in names (repeats count once),
// and the names r has no tool for, in the order of names.
func (r *Registry) subset(names []string) (sub *Registry, missing []string) {
	sub = NewRegistry()
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, name := range names {
		t, ok := r.tools[name]
		if !ok {
			missing = append(missing, name)
			continue
		}
		sub.tools[name] = t
	}
	return sub, missing
}

// ToolCategory is a category of tools with its tools sorted by name.
type ToolCategory struct {
	Name  string
	Tools []ToolSpec
}

// Categories returns the tools grouped by category, categories sorted by name and
// tools by name within each: the deterministic listing of the executor's system prompt.
func (r *Registry) Categories() []ToolCategory {
	var cats []ToolCategory
	specs := r.Specs()
	slices.SortStableFunc(specs, func(a, b ToolSpec) int { return strings.Compare(a.Category, b.Category) })
	for _, s := range specs {
		if n := len(cats); n == 0 || cats[n-1].Name != s.Category {
			cats = append(cats, ToolCategory{Name: s.Category})
		}
		cats[len(cats)-1].Tools = append(cats[len(cats)-1].Tools, s)
	}
	return cats
}

// Describe renders Categories as text, one "category:" line followed by "- name:
// description" lines per category, for logs and debugging (the system prompt's template lists the same).
func (r *Registry) Describe() string {
	var b strings.Builder
	for i, c := range r.Categories() {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s:\n", c.Name)
		for _, t := range c.Tools {
			fmt.Fprintf(&b, "- %s: %s\n", t.Name, t.Description)
		}
	}
	return b.String()
}

// Wrap replaces every tool registered in r by wrap(spec, tool), for decorators that
// observe the calls (package metrics counts and times them). Tools registered later
// are not wrapped.
func (r *Registry) Wrap(wrap func(ToolSpec, Tool) Tool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for name, t := range r.tools {
		t.tool = wrap(t.spec, t.tool)
		r.tools[name] = t
	}
}

// InferTool builds a tool from a function that takes its arguments as a Go struct T.
// The JSON schema is derived from T's fields (go-openai's jsonschema): the json tag
// names a property, ",omitempty" makes it optional, and the description:"…",
// enum:"a,b" and required:"true|false" tags describe it. The Tool decodes the
// model's arguments into a T and calls fn. Errors: T is not a struct or has a field
// of an unsupported kind (map, interface, func, chan).
func InferTool[T any](name, description string, fn func(ctx context.Context, args T) (string, error)) (ToolSpec, Tool, error) {
	var zero T
	def, err := jsonschema.GenerateSchemaForType(zero)
	if err != nil {
		return ToolSpec{}, nil, fmt.Errorf("%w %s: %w", ErrInvalidTool, name, err)
	}
	if def.Type != jsonschema.Object {
		return ToolSpec{}, nil, fmt.Errorf("%w %s: arguments type %T is not a struct", ErrInvalidTool, name, zero)
	}
	params, err := json.Marshal(def)
	if err != nil {
		return ToolSpec{}, nil, fmt.Errorf("%w %s: %w", ErrInvalidTool, name, err)
	}
	run := ToolFunc(func(ctx context.Context, raw json.RawMessage) (string, error) {
		var args T
		if err := json.Unmarshal(raw, &args); err != nil {
			return "", fmt.Errorf("invalid arguments: %w", err)
		}
		return fn(ctx, args)
	})
	return ToolSpec{Name: name, Description: description, Parameters: params}, run, nil
}

// Defaults of ExecutorConfig's tool running: one run's timeout (a ToolSpec may set
// its own), how many calls of one response run at once, and the bytes of a result the
// model reads.
const (
	DefaultToolTimeout      = 30 * time.Second
	DefaultMaxParallelTools = 8
	DefaultMaxToolResult    = 16 << 10
)

// batch is the tool calls of one model response and their results, nil for a call
// not run yet.
type batch struct {
	Calls   []openai.ToolCall        `json:"calls,omitempty"`
	Results []*conversation.ToolCall `json:"results,omitempty"`
}

// DeniedResult is the result the model reads for a call the person did not confirm.
const DeniedResult = "denied by the user: the call did not run. Answer without it, and do not try it again in this turn."

// InterruptedResult is the result the model reads for an approved call that an
// earlier run began and did not finish (conversation.Resume.Interrupted): it is not
// run twice.
const InterruptedResult = "approved, but the bot was interrupted while the call ran: it may or may not have taken effect, and it was not run again. Say so, suggest checking, and do not try it again in this turn."

// toolRunner runs the tool calls of a model response against a registry: the
// executor's loop and the research of a CommitLoop (the workflow agent's writing with
// tools) share it.
type toolRunner struct {
	registry *Registry
	// timeout bounds one run of a tool whose ToolSpec sets no Timeout.
	timeout time.Duration
	// maxParallel bounds the calls of one response that run at once.
	maxParallel int
	// maxResult bounds the bytes of a result sent to the model.
	maxResult int
}

// runBatch runs the calls of b that have no result yet: the one decided (the first
// with its id, name and arguments) is run when approved and answered with
// DeniedResult when not; the others that need confirmation are refused with an error
// without canPause, or wait; the rest run in parallel. It returns the first waiting
// call, or nil once every call has a result. A call of an untrusted tool, failed or
// not, taints the turn (*tainted). progress, when not nil, is told which tools run,
// and tasks, when not nil, is shown each call that runs as a task (toolTask).
func (t toolRunner) runBatch(ctx context.Context, log *slog.Logger, b *batch, tainted *bool, decided *conversation.Resume, canPause bool, progress conversation.Progress, tasks conversation.TaskSink) *conversation.PendingTool {
	var run []openai.ToolCall
	var at []int
	var pending *conversation.PendingTool
	for i, tc := range b.Calls {
		if b.Results[i] != nil {
			continue
		}
		if decided != nil && tc.ID == decided.Pending.CallID && tc.Function.Name == decided.Pending.Name &&
			tc.Function.Arguments == decided.Pending.Arguments {
			d := decided
			decided = nil // one decision answers one call, even when ids repeat
			if !d.Approved {
				log.InfoContext(ctx, "tool call denied", slog.String("tool", tc.Function.Name), slog.String("by", d.By))
				b.Results[i] = &conversation.ToolCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments, Result: DeniedResult, Denied: true}
				continue
			}
			if d.Interrupted {
				log.WarnContext(ctx, "approved tool call interrupted earlier; not run again", slog.String("tool", tc.Function.Name))
				b.Results[i] = &conversation.ToolCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments, Result: InterruptedResult, Failed: true}
				continue
			}
			log.InfoContext(ctx, "tool call approved", slog.String("tool", tc.Function.Name), slog.String("by", d.By))
			run, at = append(run, tc), append(at, i)
			continue
		}
		spec, _, known := t.registry.Lookup(tc.Function.Name)
		reason := ""
		if known {
			reason = approvalReason(spec, *tainted)
		}
		switch {
		case reason == "":
			run, at = append(run, tc), append(at, i)
		case !canPause:
			conversation.TaintFrom(ctx).Refuse(tc.Function.Name, reason)
			b.Results[i] = &conversation.ToolCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments, Failed: true,
				Result: "error: this tool needs the confirmation of the person who asked, which cannot be given here; it did not run"}
		case pending == nil:
			pending = &conversation.PendingTool{CallID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments, Reason: reason}
		}
	}
	if len(run) > 0 {
		if tasks != nil {
			pending := make([]conversation.Task, len(run))
			for i, tc := range run {
				pending[i] = toolTask(tc, nil)
			}
			tasks.UpdateTasks(pending...)
		}
		if progress != nil {
			progress(runningStatus(run))
		}
		for j, rec := range t.runAll(ctx, log, run, tasks) {
			b.Results[at[j]] = &rec
			// Failed or not: an error can carry outside text too (an HTTP reason
			// phrase, an MCP server's isError content).
			if untrusted(t.registry, rec) {
				*tainted = true
			}
		}
	}
	return pending
}

// runAll runs calls in parallel (at most maxParallel at once) and returns their
// records in the order of calls. It never fails: a failure is the call's result,
// "error: …", and is logged as a warning; a call that worked is logged at debug.
func (t toolRunner) runAll(ctx context.Context, log *slog.Logger, calls []openai.ToolCall, tasks conversation.TaskSink) []conversation.ToolCall {
	results := make([]conversation.ToolCall, len(calls))
	var g errgroup.Group
	g.SetLimit(t.maxParallel)
	for i, tc := range calls {
		g.Go(func() error {
			if tasks != nil {
				task := toolTask(tc, nil)
				task.Status = conversation.TaskInProgress
				tasks.UpdateTasks(task)
			}
			results[i] = t.run(ctx, log, tc)
			if tasks != nil {
				tasks.UpdateTasks(toolTask(tc, &results[i]))
			}
			return nil
		})
	}
	_ = g.Wait() // the goroutines return no errors
	return results
}

func (t toolRunner) run(ctx context.Context, log *slog.Logger, tc openai.ToolCall) conversation.ToolCall {
	rec := conversation.ToolCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments}
	start := time.Now()
	ctx, span := startTool(ctx, tc) // trace.go
	out, structured, untrusted, err := t.invoke(ctx, log, tc)
	endTool(ctx, span, out, err)
	rec.Duration, rec.Untrusted = time.Since(start), untrusted
	if err != nil {
		rec.Failed = true
		out = "error: " + err.Error()
		log.WarnContext(ctx, "tool call failed; the error goes to the model",
			slog.String("tool", rec.Name), slog.Duration("duration", rec.Duration), slog.Any("err", err))
	} else {
		log.DebugContext(ctx, "tool call", slog.String("tool", rec.Name), slog.Duration("duration", rec.Duration))
		readResultContract(&rec, out, structured) // contract.go; before the cut
	}
	rec.Result = textcut.BytesMark(out, t.maxResult, textcut.Truncated)
	return rec
}

// invoke checks a tool call and runs it under its timeout, and returns its result
// with the structured content it reported (ReportStructured) and whether it reported
// untrusted content (ReportUntrusted). A tool that ignores its context is abandoned
// when the timeout expires (its goroutine finishes on its own).
func (t toolRunner) invoke(ctx context.Context, log *slog.Logger, tc openai.ToolCall) (string, []json.RawMessage, bool, error) {
	sink := &structuredSink{}
	out, err := t.invokeTool(withStructuredSink(ctx, sink), log, tc)
	if err != nil {
		return out, nil, sink.isUntrusted(), err
	}
	return out, sink.take(), sink.isUntrusted(), nil
}

func (t toolRunner) invokeTool(ctx context.Context, log *slog.Logger, tc openai.ToolCall) (string, error) {
	name := tc.Function.Name
	spec, tool, ok := t.registry.Lookup(name)
	if !ok {
		return "", fmt.Errorf("tool %q is not available in this conversation; the available tools are: %s", name, strings.Join(t.registry.Names(), ", "))
	}
	args := strings.TrimSpace(tc.Function.Arguments)
	if args == "" {
		args = "{}" // models send "" for a function without parameters
	}
	if !json.Valid([]byte(args)) || args[0] != '{' {
		return "", fmt.Errorf("the arguments are not a valid JSON object: %s", textcut.BytesMark(args, 200, textcut.Truncated))
	}
	timeout := cmp.Or(spec.Timeout, t.timeout)
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				log.ErrorContext(ctx, "tool panicked", slog.String("tool", name), slog.Any("panic", r), slog.String("stack", string(debug.Stack())))
				done <- result{err: fmt.Errorf("the tool crashed: %v", r)}
			}
		}()
		out, err := tool.Run(tctx, json.RawMessage(args))
		done <- result{out, err}
	}()

	select {
	case r := <-done:
		if r.err != nil && ctx.Err() == nil && errors.Is(tctx.Err(), context.DeadlineExceeded) {
			return "", fmt.Errorf("timed out after %s", timeout) // as in the case below
		}
		return r.out, r.err
	case <-tctx.Done():
		if err := ctx.Err(); err != nil {
			return "", fmt.Errorf("not finished: %w", err)
		}
		return "", fmt.Errorf("timed out after %s", timeout)
	}
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
