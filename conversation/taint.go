package conversation

import (
	"context"
	"slices"
	"sync"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// Taint is what one piece of work (a workflow write, one item of a pipeline) tells
// its caller about untrusted content (docs/tools.md, "Tool policy"): whether any went
// into it (a tainted dependency, an untrusted tool's output, an untrusted MCP
// server's descriptions), and which tool calls were refused because nobody could
// confirm them there. The caller puts a *Taint in the context (WithTaint), the
// model adapter marks it (agents.CommitLoop), and the caller records it in the
// workflow run's state (workflow.ArtifactState.Tainted, Refused). A nil *Taint
// records nothing. Safe for concurrent use.
type Taint struct {
	mu      sync.Mutex
	read    bool
	refused []RefusedCall
}

// RefusedCall is a tool call a write did not run because it needed a person's
// confirmation and nobody could give it there.
type RefusedCall = workflow.RefusedCall

type taintKey struct{}

// WithTaint returns ctx carrying t.
func WithTaint(ctx context.Context, t *Taint) context.Context {
	return context.WithValue(ctx, taintKey{}, t)
}

// TaintFrom returns the *Taint ctx carries, or nil.
func TaintFrom(ctx context.Context) *Taint {
	t, _ := ctx.Value(taintKey{}).(*Taint)
	return t
}

// MarkRead records that untrusted content went into the work.
func (t *Taint) MarkRead() {
	if t == nil {
		return
	}
	t.mu.Lock()
	t.read = true
	t.mu.Unlock()
}

// Refuse records a refused call of tool, for reason; a tool refused for the same
// reason before is recorded once.
func (t *Taint) Refuse(tool, reason string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	c := RefusedCall{Tool: tool, Reason: reason}
	if !slices.Contains(t.refused, c) {
		t.refused = append(t.refused, c)
	}
}

// Read reports whether untrusted content went into the work.
func (t *Taint) Read() bool {
	if t == nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.read
}

// Refused returns the refused calls, in the order they were first refused.
func (t *Taint) Refused() []RefusedCall {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.refused)
}
