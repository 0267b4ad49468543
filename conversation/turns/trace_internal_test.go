package turns

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"
)

// TestTurnOutcome checks the outcome a turn's root span ends with, from what the turn
// returned, its context, and what the store was told of its input (docs/operations.md, "Traces").
func TestTraceTurnOutcome(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp)))
	t.Cleanup(func() { otel.SetTracerProvider(noop.NewTracerProvider()) })
	in := conversation.Input{ID: "in1", Kind: conversation.KindUserMessage, Attempts: 2, Key: conversation.Key{TeamID: "T", ChannelID: "C", ThreadTS: "1.2"}}

	for _, tc := range []struct {
		name   string
		run    func(ctx context.Context) (context.Context, error)
		down   bool
		want   string
		failed bool
	}{
		{"Answered", func(ctx context.Context) (context.Context, error) {
			noteStatus(ctx, "in1", conversation.InputDone)
			return ctx, nil
		}, false, OutcomeAnswered, false},
		{"Dropped", func(ctx context.Context) (context.Context, error) {
			noteStatus(ctx, "in1", conversation.InputDropped)
			return ctx, nil
		}, false, OutcomeDropped, false},
		{"FailedAndToldSo", func(ctx context.Context) (context.Context, error) {
			noteStatus(ctx, "in1", conversation.InputFailed)
			return ctx, nil
		}, false, OutcomeFailed, true},
		{"AnotherInputIgnored", func(ctx context.Context) (context.Context, error) {
			noteStatus(ctx, "other", conversation.InputDropped)
			return ctx, nil
		}, false, OutcomeAnswered, false},
		{"Stopped", func(ctx context.Context) (context.Context, error) {
			ctx, stop := context.WithCancelCause(ctx)
			stop(conversation.Stopped{By: "U1"})
			return ctx, nil
		}, false, OutcomeStopped, false},
		{"TimedOut", func(ctx context.Context) (context.Context, error) {
			ctx, cancel := context.WithDeadline(ctx, time.Now().Add(-time.Second))
			t.Cleanup(cancel)
			return ctx, nil
		}, false, OutcomeTimedOut, true},
		{"LeaseLost", func(ctx context.Context) (context.Context, error) {
			return ctx, errors.Join(errors.New("save"), conversation.ErrLeaseLost)
		}, false, OutcomeLeaseLost, true},
		{"Shutdown", func(ctx context.Context) (context.Context, error) {
			return ctx, context.Canceled
		}, true, OutcomeShutdown, false},
		{"LeftPending", func(ctx context.Context) (context.Context, error) {
			return ctx, errors.New("store unavailable")
		}, false, OutcomeError, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exp.Reset()
			ctx, _, tt := startTurn(context.Background(), in, slog.New(slog.NewTextHandler(io.Discard, nil)))
			ctx, err := tc.run(ctx)
			tt.end(ctx, err, tc.down)
			spans := exp.GetSpans()
			if len(spans) != 1 {
				t.Fatalf("%d spans", len(spans))
			}
			var got string
			for _, a := range spans[0].Attributes {
				if a.Key == TraceKeyOutcome {
					got = a.Value.AsString()
				}
			}
			if got != tc.want {
				t.Errorf("outcome %q, want %q", got, tc.want)
			}
			if failed := spans[0].Status.Code == codes.Error; failed != tc.failed {
				t.Errorf("status %v, want failed %v", spans[0].Status, tc.failed)
			}
		})
	}
}

// TestStoreCallsOutsideATurnAreNotTraced: lease renewals and sweeps run outside any
// turn and make no traces of their own.
func TestStoreCallsOutsideATurnAreNotTraced(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp)))
	t.Cleanup(func() { otel.SetTracerProvider(noop.NewTracerProvider()) })
	_, span := storeSpan(context.Background(), "Renew")
	span.End()
	ctx, _, tt := startTurn(context.Background(), conversation.Input{ID: "in1", Kind: conversation.KindAction}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	_, span = storeSpan(ctx, "Save")
	span.End()
	tt.end(ctx, nil, false)
	spans := exp.GetSpans()
	if len(spans) != 2 || spans[0].Name != "store.Save" || spans[1].Name != "turn action" {
		t.Fatalf("spans %v, want store.Save inside turn action only", spans)
	}
}
