package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/threadwright/threadwright/agents"
)

// TestInstrumentTools checks the tools' wiring to the instruments: every tool
// registered when they are made reports its runs, with their outcomes; a tool
// registered later does not.
func TestInstrumentTools(t *testing.T) {
	r := agents.NewRegistry()
	run := func(f func(ctx context.Context) (string, error)) agents.Tool {
		return agents.ToolFunc(func(ctx context.Context, _ json.RawMessage) (string, error) { return f(ctx) })
	}
	r.MustRegister(agents.ToolSpec{Name: "good", Description: "works"}, run(func(context.Context) (string, error) { return "ok", nil }))
	r.MustRegister(agents.ToolSpec{Name: "bad", Description: "fails"}, run(func(context.Context) (string, error) { return "", errors.New("no") }))
	r.MustRegister(agents.ToolSpec{Name: "slow", Description: "times out"}, run(func(ctx context.Context) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}))
	m := newMetrics(&Config{}, nil, nil, r)
	r.MustRegister(agents.ToolSpec{Name: "late", Description: "registered after"}, run(func(context.Context) (string, error) { return "", nil }))

	ctx := context.Background()
	for _, name := range []string{"good", "good", "bad", "late"} {
		_, tool, _ := r.Lookup(name)
		_, _ = tool.Run(ctx, nil)
	}
	_, slow, _ := r.Lookup("slow")
	tctx, cancel := context.WithTimeout(ctx, time.Millisecond)
	defer cancel()
	if _, err := slow.Run(tctx, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("slow: %v", err)
	}
	want := `
# HELP threadwright_tool_calls_total Tool calls run, by tool and outcome (ok, error, timeout, canceled, panic).
# TYPE threadwright_tool_calls_total counter
threadwright_tool_calls_total{outcome="error",tool="bad"} 1
threadwright_tool_calls_total{outcome="ok",tool="good"} 2
threadwright_tool_calls_total{outcome="timeout",tool="slow"} 1
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "threadwright_tool_calls_total"); err != nil {
		t.Error(err)
	}
}
