package metrics

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/threadwright/threadwright/agents"
)

// InstrumentTools wraps every tool registered in r so that its calls are counted and
// timed (threadwright_tool_calls_total{tool,outcome},
// threadwright_tool_call_duration_seconds{tool}), and bounds the tool label to the
// names registered now: call it once every tool (built-in, MCP_CONFIG's, the
// program's own) is registered. Nothing for a nil Metrics.
func (m *Metrics) InstrumentTools(r *agents.Registry) {
	if m == nil {
		return
	}
	m.tools.Allow(r.Names()...)
	r.Wrap(func(spec agents.ToolSpec, t agents.Tool) agents.Tool {
		return &tool{next: t, name: m.tools.Value(spec.Name), m: m}
	})
}

// tool is a Tool whose runs are recorded.
type tool struct {
	next agents.Tool
	name string // the label value
	m    *Metrics
}

// Run runs the tool and records the outcome: ok, timeout (its context's deadline
// passed: the tool's timeout, or the turn's), canceled, error, or panic (the
// executor recovers it).
func (t *tool) Run(ctx context.Context, args json.RawMessage) (string, error) {
	start := time.Now()
	outcome := "panic" // unless Run returns
	defer func() {
		t.m.toolCalls.WithLabelValues(t.name, outcome).Inc()
		t.m.toolDuration.WithLabelValues(t.name).Observe(seconds(time.Since(start)))
	}()
	out, err := t.next.Run(ctx, args)
	outcome = toolOutcome(ctx, err)
	return out, err
}

// toolOutcome names the outcome of a run that returned err under ctx.
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
