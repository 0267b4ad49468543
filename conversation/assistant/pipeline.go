package assistant

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/threadwright/threadwright/conversation"
)

// outcome is what the assistant pipeline produced for a turn.
type outcome struct {
	text       string
	usage      conversation.Usage
	turn       *turnMeta // how the answer was found (nil when it was not)
	entities   []conversation.Entity
	outOfScope []conversation.Entity
	// answer is the executor's answer that text was synthesized from ("" when text is
	// something else, such as the scope check's refusal), and truncated its Truncated.
	answer    string
	truncated bool
	// tools are the names of the tools used, each once, in first-use order (denied
	// calls left out).
	tools []string
	// pending is the tool call the executor stopped before, waiting for a person's
	// confirmation (Findings.Pending); nothing else is set but usage.
	pending *conversation.PendingTool
}

// answer runs scope check → executor → synthesizer. progress is told what the
// executor does. A resumed turn (p.Resume) was checked when it began; an executor
// that stops for a confirmation leaves out.pending.
func (s *Handler) answer(ctx context.Context, log *slog.Logger, p conversation.Prompt, progress conversation.Progress) (outcome, error) {
	var out outcome
	if s.cfg.Scope != nil && p.Resume == nil {
		v, err := s.cfg.Scope.CheckScope(ctx, p)
		if err != nil {
			return out, fmt.Errorf("scope check: %w", err)
		}
		out.usage = out.usage.Add(v.Usage)
		if !v.InScope {
			log.Info("request out of scope", "reason", v.Reason)
			out.text = v.Reply
			return out, nil
		}
	}
	f, err := s.cfg.Executor.Execute(ctx, p, progress)
	out.usage = out.usage.Add(f.Usage)
	if err != nil {
		return out, fmt.Errorf("execute: %w", err)
	}
	if f.Pending != nil {
		out.pending = f.Pending
		return out, nil
	}
	if out.text, err = s.cfg.Synthesizer.Synthesize(ctx, p, f); err != nil {
		return out, fmt.Errorf("synthesize: %w", err)
	}
	out.turn = &turnMeta{ToolCalls: f.ToolCalls, Steps: f.Steps, Truncated: f.Truncated, Model: s.cfg.Model, Strategy: f.Strategy}
	out.entities, out.outOfScope = f.Entities, f.OutOfScope
	for _, c := range f.ToolCalls {
		if !c.Denied && !slices.Contains(out.tools, c.Name) {
			out.tools = append(out.tools, c.Name)
		}
	}
	out.answer, out.truncated = f.Answer, f.Truncated
	if e, ok := s.cfg.Synthesizer.(conversation.AnswerEditor); ok {
		if md, edited := e.EditAnswer(f); edited {
			out.answer = md // the stream completes it, or the reply replaces it
		}
	}
	return out, nil
}

// rememberEntities returns the session context after a turn: the entities the turn's
// tools returned, in the order they came (so "the second one" is the second result),
// then the earlier ones, without duplicates (by id), without the items marked out of
// scope, at most MaxEntities.
func rememberEntities(old, found, outOfScope []conversation.Entity) []conversation.Entity {
	drop := map[string]bool{}
	for _, e := range outOfScope {
		drop[e.ID] = true
	}
	seen := map[string]bool{}
	out := make([]conversation.Entity, 0, conversation.MaxEntities)
	add := func(e conversation.Entity) {
		if e.ID == "" || drop[e.ID] || seen[e.ID] || len(out) == conversation.MaxEntities {
			return
		}
		seen[e.ID] = true
		e.Reason = ""
		out = append(out, e)
	}
	for _, e := range found {
		add(e)
	}
	for _, e := range old {
		add(e)
	}
	return out
}

// turnMeta is the assistant message's Meta: how its answer was found.
type turnMeta struct {
	ToolCalls []conversation.ToolCall `json:"tool_calls,omitempty"`
	Steps     int                     `json:"steps,omitempty"`
	Truncated bool                    `json:"truncated,omitempty"`
	// Model, Strategy and LatencyMS (the turn's time, in milliseconds) are kept for
	// feedback on the answer (conversation/feedback.go).
	Model     string `json:"model,omitempty"`
	Strategy  string `json:"strategy,omitempty"`
	LatencyMS int64  `json:"latency_ms,omitempty"`
}

// meta returns the answer's Meta: how it was found, with the turn's latency (nil
// when the pipeline found no answer).
func (o outcome) meta(latency time.Duration) json.RawMessage {
	if o.turn == nil {
		return nil
	}
	t := *o.turn
	t.LatencyMS = max(latency.Milliseconds(), 1)
	b, _ := json.Marshal(t) // plain values: cannot fail
	return b
}
