package turns

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/internal/tracing"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// Traces of turns (docs/operations.md, "Traces"): one root span per turn, with spans for the
// scope check and for the store calls the turn makes; the model, tool and Slack spans
// below them come from agents and the Messenger's HTTP client. Spans carry no text a
// person wrote: the thread is named by a hash of its key.

// Attributes of turn spans.
const (
	// TraceKeyInputKind is the input's InputKind.
	TraceKeyInputKind = attribute.Key("threadwright.input.kind")
	// TraceKeyAttempt is the input's Attempts (1 on its first run).
	TraceKeyAttempt = attribute.Key("threadwright.input.attempt")
	// TraceKeyThread is ThreadHash of the input's thread.
	TraceKeyThread = attribute.Key("threadwright.thread.hash")
	// TraceKeyOutcome is how the turn ended (see the Outcome constants).
	TraceKeyOutcome = attribute.Key("threadwright.turn.outcome")
	// TraceKeyInScope is a scope check's verdict.
	TraceKeyInScope = attribute.Key("threadwright.scope.in_scope")
	// TraceKeyStatus is the status a store call gives an input (Store.Finish).
	TraceKeyStatus = attribute.Key("threadwright.input.status")
)

// Outcomes of a turn (TraceKeyOutcome).
const (
	OutcomeAnswered  = "answered"   // finished and saved (its reply posted)
	OutcomeDropped   = "dropped"    // finished as dropped (not for the bot)
	OutcomeFailed    = "failed"     // finished as failed (told the person, gave up)
	OutcomeStopped   = "stopped"    // a person stopped it
	OutcomeTimedOut  = "timed_out"  // TurnTimeout passed
	OutcomeLeaseLost = "lease_lost" // another worker took the thread
	OutcomeShutdown  = "shutdown"   // the service stopped; the input stays pending
	OutcomeError     = "error"      // it failed; the input stays pending, to run again
)

// ThreadHash names thread key in traces without its ids: the first 16 hex digits of
// the SHA-256 of Key.String.
func ThreadHash(key conversation.Key) string {
	sum := sha256.Sum256([]byte(key.String()))
	return hex.EncodeToString(sum[:8])
}

type turnTraceKey struct{}

// turnTrace is the root span of a running turn, and what the store learned of the
// turn's ending.
type turnTrace struct {
	span trace.Span
	in   string // the input id

	mu     sync.Mutex
	status conversation.InputStatus // set by Store.Save (done) and Store.Finish
}

// startTurn starts the root span of in's turn and returns ctx carrying it, and log
// with its trace id (tracing.Logger).
func startTurn(ctx context.Context, in conversation.Input, log *slog.Logger) (context.Context, *slog.Logger, *turnTrace) {
	ctx, span := tracing.Start(ctx, "turn "+string(in.Kind), trace.WithNewRoot(), trace.WithAttributes(
		TraceKeyInputKind.String(string(in.Kind)), TraceKeyAttempt.Int(in.Attempts), TraceKeyThread.String(ThreadHash(in.Key)),
	))
	tt := &turnTrace{span: span, in: in.ID}
	return context.WithValue(ctx, turnTraceKey{}, tt), tracing.Logger(ctx, log), tt
}

// noteStatus records that the store gave the turn's input status.
func noteStatus(ctx context.Context, id string, status conversation.InputStatus) {
	if tt, _ := ctx.Value(turnTraceKey{}).(*turnTrace); tt != nil && tt.in == id {
		tt.mu.Lock()
		tt.status = status
		tt.mu.Unlock()
	}
}

// end ends the turn's span with its outcome: ctx is the turn's context, err what
// the turn returned, down whether the service is shutting down.
func (tt *turnTrace) end(ctx context.Context, err error, down bool) {
	tt.mu.Lock()
	status := tt.status
	tt.mu.Unlock()
	var outcome string
	_, stopped := conversation.StoppedBy(ctx)
	switch {
	case errors.Is(err, conversation.ErrLeaseLost):
		outcome = OutcomeLeaseLost
	case err != nil && down:
		outcome = OutcomeShutdown
	case err != nil:
		outcome = OutcomeError
	case stopped:
		outcome = OutcomeStopped
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		outcome = OutcomeTimedOut
	case status == conversation.InputDropped:
		outcome = OutcomeDropped
	case status == conversation.InputFailed:
		outcome = OutcomeFailed
	default:
		outcome = OutcomeAnswered
	}
	tt.span.SetAttributes(TraceKeyOutcome.String(outcome))
	switch outcome {
	case OutcomeError, OutcomeLeaseLost:
		tracing.Fail(tt.span, err)
	case OutcomeTimedOut, OutcomeFailed:
		tt.span.SetStatus(codes.Error, outcome)
	}
	tt.span.End()
}

// tracedStore traces the Store calls made inside a turn: a client span
// "store.<Method>" with db.operation.name the method. Calls outside a trace (lease
// renewals, sweeps, Submit) are passed on untraced.
type tracedStore struct{ conversation.Store }

// storeSpan starts the span of the store call op.
func storeSpan(ctx context.Context, op string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	ctx, span := tracing.Child(ctx, "store."+op, trace.WithSpanKind(trace.SpanKindClient))
	if span.IsRecording() {
		span.SetAttributes(semconv.DBOperationName(op))
		span.SetAttributes(attrs...)
	}
	return ctx, span
}

func (t tracedStore) Load(ctx context.Context, key conversation.Key, recent int) (*conversation.Checkpoint, error) {
	ctx, span := storeSpan(ctx, "Load")
	cp, err := t.Store.Load(ctx, key, recent)
	if errors.Is(err, conversation.ErrNotFound) { // a new conversation: not a failure
		span.SetAttributes(attribute.Bool("threadwright.store.found", false))
		span.End()
		return cp, err
	}
	tracing.End(span, err)
	return cp, err
}

func (t tracedStore) Exists(ctx context.Context, key conversation.Key) (bool, error) {
	ctx, span := storeSpan(ctx, "Exists")
	ok, err := t.Store.Exists(ctx, key)
	tracing.End(span, err)
	return ok, err
}

func (t tracedStore) Save(ctx context.Context, turn conversation.Turn) (conversation.Saved, error) {
	ctx, span := storeSpan(ctx, "Save", attribute.Int("threadwright.store.appended", len(turn.Append)),
		attribute.Int("threadwright.store.enqueued", len(turn.Enqueue)))
	saved, err := t.Store.Save(ctx, turn)
	if err == nil && turn.InputID != "" {
		noteStatus(ctx, turn.InputID, conversation.InputDone)
	}
	tracing.End(span, err)
	return saved, err
}

func (t tracedStore) Enqueue(ctx context.Context, in conversation.Input) (bool, error) {
	ctx, span := storeSpan(ctx, "Enqueue", TraceKeyInputKind.String(string(in.Kind)))
	ok, err := t.Store.Enqueue(ctx, in)
	tracing.End(span, err)
	return ok, err
}

func (t tracedStore) EnqueueBatch(ctx context.Context, ins []conversation.Input) ([]bool, error) {
	ctx, span := storeSpan(ctx, "EnqueueBatch", attribute.Int("threadwright.store.enqueued", len(ins)))
	ok, err := t.Store.EnqueueBatch(ctx, ins)
	tracing.End(span, err)
	return ok, err
}

func (t tracedStore) CountPending(ctx context.Context, key conversation.Key, userID string, limit int) (conversation.PendingCounts, error) {
	ctx, span := storeSpan(ctx, "CountPending")
	n, err := t.Store.CountPending(ctx, key, userID, limit)
	tracing.End(span, err)
	return n, err
}

func (t tracedStore) Enqueued(ctx context.Context, id string) (bool, error) {
	ctx, span := storeSpan(ctx, "Enqueued")
	ok, err := t.Store.Enqueued(ctx, id)
	tracing.End(span, err)
	return ok, err
}

func (t tracedStore) Amend(ctx context.Context, id, text string, drop bool) (bool, error) {
	ctx, span := storeSpan(ctx, "Amend")
	ok, err := t.Store.Amend(ctx, id, text, drop)
	tracing.End(span, err)
	return ok, err
}

func (t tracedStore) Acquire(ctx context.Context, key conversation.Key, owner string, ttl time.Duration) (conversation.Lease, string, bool, error) {
	ctx, span := storeSpan(ctx, "Acquire")
	l, prev, ok, err := t.Store.Acquire(ctx, key, owner, ttl)
	tracing.End(span, err)
	return l, prev, ok, err
}

func (t tracedStore) AcquireBegin(ctx context.Context, key conversation.Key, owner string, ttl time.Duration) (conversation.Lease, string, *conversation.Input, bool, error) {
	ctx, span := storeSpan(ctx, "AcquireBegin")
	l, prev, in, ok, err := t.Store.AcquireBegin(ctx, key, owner, ttl)
	tracing.End(span, err)
	return l, prev, in, ok, err
}

func (t tracedStore) Begin(ctx context.Context, l conversation.Lease) (*conversation.Input, error) {
	ctx, span := storeSpan(ctx, "Begin")
	in, err := t.Store.Begin(ctx, l)
	tracing.End(span, err)
	return in, err
}

func (t tracedStore) Next(ctx context.Context, l conversation.Lease, call int64) (*conversation.Input, bool, error) {
	ctx, span := storeSpan(ctx, "Next")
	in, released, err := t.Store.Next(ctx, l, call)
	tracing.End(span, err)
	return in, released, err
}

func (t tracedStore) Release(ctx context.Context, l conversation.Lease) (bool, error) {
	ctx, span := storeSpan(ctx, "Release")
	ok, err := t.Store.Release(ctx, l)
	tracing.End(span, err)
	return ok, err
}

func (t tracedStore) Abandon(ctx context.Context, l conversation.Lease) error {
	ctx, span := storeSpan(ctx, "Abandon")
	err := t.Store.Abandon(ctx, l)
	tracing.End(span, err)
	return err
}

func (t tracedStore) Renew(ctx context.Context, owner string, ttl time.Duration) ([]conversation.LeaseState, error) {
	ctx, span := storeSpan(ctx, "Renew")
	states, err := t.Store.Renew(ctx, owner, ttl)
	tracing.End(span, err)
	return states, err
}

func (t tracedStore) Signal(ctx context.Context, key conversation.Key, r conversation.StopRequest) error {
	ctx, span := storeSpan(ctx, "Signal")
	err := t.Store.Signal(ctx, key, r)
	tracing.End(span, err)
	return err
}

func (t tracedStore) Finish(ctx context.Context, l conversation.Lease, id string, status conversation.InputStatus) error {
	ctx, span := storeSpan(ctx, "Finish", TraceKeyStatus.String(string(status)))
	err := t.Store.Finish(ctx, l, id, status)
	if err == nil {
		noteStatus(ctx, id, status)
	}
	tracing.End(span, err)
	return err
}
