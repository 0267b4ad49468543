package agents

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// ToolMetrics observes tool runs (the metrics package implements it).
type ToolMetrics interface {
	// ToolCall is told of a run of tool (its registered name) that ended with
	// outcome (ok, error, timeout, canceled, panic) after d.
	ToolCall(tool, outcome string, d time.Duration)
}

// InstrumentTools wraps every tool registered in r (see Registry.Wrap) so that each
// run is reported to m. Call it once every tool is registered: tools registered later
// are not wrapped.
func InstrumentTools(r *Registry, m ToolMetrics) {
	r.Wrap(func(spec ToolSpec, t Tool) Tool {
		return &measuredTool{next: t, name: spec.Name, m: m}
	})
}

// measuredTool is a Tool whose runs are reported to a ToolMetrics.
type measuredTool struct {
	next Tool
	name string
	m    ToolMetrics
}

// Run runs the tool and reports the outcome: ok, timeout (its context's deadline
// passed: the tool's timeout, or the turn's), canceled, error, or panic (the
// executor recovers it).
func (t *measuredTool) Run(ctx context.Context, args json.RawMessage) (string, error) {
	start := time.Now()
	outcome := "panic" // unless Run returns
	defer func() { t.m.ToolCall(t.name, outcome, time.Since(start)) }()
	out, err := t.next.Run(ctx, args)
	outcome = toolOutcome(ctx, err)
	return out, err
}

// toolOutcome names the outcome of a tool run that returned err under ctx.
func toolOutcome(ctx context.Context, err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return "timeout"
	case ctx.Err() != nil:
		return "canceled"
	default:
		return "error"
	}
}
