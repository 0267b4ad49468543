package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/eval/cassette"
	"github.com/threadwright/threadwright/internal/textcut"
)

// ModelCall is one chat completion of a run, as the model tap saw it.
type ModelCall struct {
	// Step is the index of the thread's step during which the call was made.
	Step int `json:"step"`
	// Model is the request's model; Function the function tool_choice forced ("" when
	// none); Calls the functions the answer called.
	Model            string   `json:"model"`
	Function         string   `json:"function,omitempty"`
	Calls            []string `json:"calls,omitempty"`
	PromptTokens     int      `json:"prompt_tokens"`
	CompletionTokens int      `json:"completion_tokens"`
	DurationMS       int64    `json:"duration_ms"`
	Error            string   `json:"error,omitempty"`
	// Drift says the call found no recorded response in the replayed cassette.
	Drift bool `json:"drift,omitempty"`
}

// ToolRun is one run of a tool, as the tool tap saw it.
type ToolRun struct {
	Step      int             `json:"step"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	// Result is what the tool returned, Error its error ("" when it succeeded).
	Result     string `json:"result,omitempty"`
	Error      string `json:"error,omitempty"`
	DurationMS int64  `json:"duration_ms"`
	// ReadOnly and NeedsApproval are the tool's classification (agents.ToolSpec): a
	// tool that is not read-only has side effects.
	ReadOnly      bool `json:"read_only,omitempty"`
	NeedsApproval bool `json:"needs_approval,omitempty"`
}

// ScopeVerdict is the verdict of one scope check.
type ScopeVerdict struct {
	Step    int    `json:"step"`
	InScope bool   `json:"in_scope"`
	Reason  string `json:"reason,omitempty"`
	Error   string `json:"error,omitempty"`
}

// maxTapResult bounds the text of a tool's result the tap keeps, in bytes: more than
// search_knowledge's whole result (12,000 characters), so that cited sources are
// found in it.
const maxTapResult = 64 << 10

// tap records what a run's model, tools and scope check did, each by the step
// during which it happened. Its methods are safe for concurrent use: the bot calls
// them from its turns.
type tap struct {
	mu     sync.Mutex
	step   int
	calls  []ModelCall
	tools  []ToolRun
	scope  []ScopeVerdict
	drift  []string
	search agents.Tool // search_knowledge as registered, unwrapped (nil: none)
}

// setStep marks the start of step i.
func (t *tap) setStep(i int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.step = i
}

// completerFunc adapts a function to agents.Completer.
type completerFunc func(ctx context.Context, req openai.ChatCompletionRequest) (agents.Completion, error)

func (f completerFunc) Complete(ctx context.Context, req openai.ChatCompletionRequest) (agents.Completion, error) {
	return f(ctx, req)
}

// model wraps a model client of the run so that every call is recorded.
func (t *tap) model(inner agents.Completer) agents.Completer {
	return completerFunc(func(ctx context.Context, req openai.ChatCompletionRequest) (agents.Completion, error) {
		start := time.Now()
		comp, err := inner.Complete(ctx, req)
		call := ModelCall{Model: req.Model, Function: forcedFunction(req), PromptTokens: comp.Usage.PromptTokens,
			CompletionTokens: comp.Usage.CompletionTokens, DurationMS: time.Since(start).Milliseconds()}
		for _, tc := range comp.ToolCalls {
			call.Calls = append(call.Calls, tc.Function.Name)
		}
		if err != nil {
			call.Error = textcut.BytesMark(err.Error(), 2000, textcut.Truncated)
			call.Drift = errors.Is(err, cassette.ErrDrift)
		}
		t.mu.Lock()
		call.Step = t.step
		t.calls = append(t.calls, call)
		if call.Drift {
			t.drift = append(t.drift, call.Error)
		}
		t.mu.Unlock()
		return comp, err
	})
}

// forcedFunction returns the function req's tool_choice forces, or "".
func forcedFunction(req openai.ChatCompletionRequest) string {
	switch tc := req.ToolChoice.(type) {
	case openai.ToolChoice:
		return tc.Function.Name
	case *openai.ToolChoice:
		if tc != nil {
			return tc.Function.Name
		}
		return ""
	case nil, string:
		return ""
	}
	var tc openai.ToolChoice // decoded from JSON: a map
	b, _ := json.Marshal(req.ToolChoice)
	_ = json.Unmarshal(b, &tc)
	return tc.Function.Name
}

// tool wraps a tool of the run so that every run of it is recorded (an
// agents.Registry.Wrap function).
func (t *tap) tool(spec agents.ToolSpec, inner agents.Tool) agents.Tool {
	if spec.Name == searchKnowledge {
		t.mu.Lock()
		t.search = inner
		t.mu.Unlock()
	}
	return agents.ToolFunc(func(ctx context.Context, args json.RawMessage) (string, error) {
		start := time.Now()
		out, err := inner.Run(ctx, args)
		run := ToolRun{Name: spec.Name, Arguments: append(json.RawMessage(nil), args...),
			Result: textcut.BytesMark(out, maxTapResult, textcut.Truncated), DurationMS: time.Since(start).Milliseconds(),
			ReadOnly: spec.ReadOnly, NeedsApproval: spec.NeedsApproval}
		if err != nil {
			run.Error = textcut.BytesMark(err.Error(), 2000, textcut.Truncated)
		}
		t.mu.Lock()
		run.Step = t.step
		t.tools = append(t.tools, run)
		t.mu.Unlock()
		return out, err
	})
}

// scopeFunc adapts a function to conversation.ScopeChecker.
type scopeFunc func(ctx context.Context, p conversation.Prompt) (conversation.Verdict, error)

func (f scopeFunc) CheckScope(ctx context.Context, p conversation.Prompt) (conversation.Verdict, error) {
	return f(ctx, p)
}

// scopeCheck wraps the run's scope check so that every verdict is recorded.
func (t *tap) scopeCheck(inner conversation.ScopeChecker) conversation.ScopeChecker {
	return scopeFunc(func(ctx context.Context, p conversation.Prompt) (conversation.Verdict, error) {
		v, err := inner.CheckScope(ctx, p)
		sv := ScopeVerdict{InScope: v.InScope, Reason: v.Reason}
		if err != nil {
			sv.Error = err.Error()
		}
		t.mu.Lock()
		sv.Step = t.step
		t.scope = append(t.scope, sv)
		t.mu.Unlock()
		return v, err
	})
}

// snapshot returns copies of what the tap recorded.
func (t *tap) snapshot() (calls []ModelCall, tools []ToolRun, scope []ScopeVerdict, drift []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]ModelCall(nil), t.calls...), append([]ToolRun(nil), t.tools...),
		append([]ScopeVerdict(nil), t.scope...), append([]string(nil), t.drift...)
}

// searchTool returns search_knowledge as registered, or nil.
func (t *tap) searchTool() agents.Tool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.search
}

// searchKnowledge is the knowledge base's tool (agents/toolbox).
const searchKnowledge = "search_knowledge"

// registerStubs returns the function that adds c's stub tools to a registry.
func registerStubs(stubs []ToolStub) func(*agents.Registry) error {
	return func(r *agents.Registry) error {
		for _, s := range stubs {
			params := json.RawMessage(`{"type":"object","properties":{}}`)
			if s.Parameters != nil {
				b, err := json.Marshal(s.Parameters)
				if err != nil {
					return fmt.Errorf("tool %s: parameters: %w", s.Name, err)
				}
				params = b
			}
			spec := agents.ToolSpec{Name: s.Name, Description: s.Description, Category: "Case tools", Parameters: params,
				ReadOnly: s.ReadOnly, NeedsApproval: s.NeedsApproval, Untrusted: s.Untrusted}
			result, failure := s.Result, s.Error
			tool := agents.ToolFunc(func(ctx context.Context, _ json.RawMessage) (string, error) {
				if err := ctx.Err(); err != nil {
					return "", err
				}
				if failure != "" {
					return "", errors.New(failure)
				}
				return result, nil
			})
			if err := r.Register(spec, tool); err != nil {
				return err
			}
		}
		return nil
	}
}
