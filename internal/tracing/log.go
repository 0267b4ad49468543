package tracing

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/trace"
)

// Log attribute keys of the ids of a line's trace and span (hex, as trace backends show them).
const (
	LogKeyTraceID = "trace_id"
	LogKeySpanID  = "span_id"
)

// LogHandler is a slog.Handler that adds the trace and span ids of the context a
// record is logged with (LogKeyTraceID, LogKeySpanID), when it carries a span that
// is sampled, and passes the record on. A logger that already carries the ids
// (Logger) keeps its own. Compose it outside the other handlers, such as
// internal/redact's scrubbing Handler: slog.New(NewLogHandler(redact.NewHandler(h, r))).
type LogHandler struct {
	next slog.Handler
	// fixed: the ids are among the handler's attributes already (Logger).
	fixed bool
}

var _ slog.Handler = (*LogHandler)(nil)

// NewLogHandler returns next wrapped in a LogHandler.
func NewLogHandler(next slog.Handler) *LogHandler { return &LogHandler{next: next} }

// Enabled reports whether the wrapped handler handles records of level.
func (h *LogHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

// Handle adds ctx's trace and span ids to rec and passes it on.
func (h *LogHandler) Handle(ctx context.Context, rec slog.Record) error {
	if !h.fixed {
		if sc := trace.SpanContextFromContext(ctx); sc.IsValid() && sc.IsSampled() {
			rec = rec.Clone()
			rec.AddAttrs(slog.String(LogKeyTraceID, sc.TraceID().String()), slog.String(LogKeySpanID, sc.SpanID().String()))
		}
	}
	return h.next.Handle(ctx, rec)
}

// WithAttrs passes attrs on; a handler given the ids (Logger) stops adding them.
func (h *LogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	fixed := h.fixed
	for _, a := range attrs {
		fixed = fixed || a.Key == LogKeyTraceID
	}
	return &LogHandler{next: h.next.WithAttrs(attrs), fixed: fixed}
}

// WithGroup passes the group on.
func (h *LogHandler) WithGroup(name string) slog.Handler {
	return &LogHandler{next: h.next.WithGroup(name), fixed: h.fixed}
}

// Logger returns log with the trace and span ids of ctx's span, for code that logs
// without a context (log.Info rather than log.InfoContext); log itself when ctx
// carries no sampled span (tracing off).
func Logger(ctx context.Context, log *slog.Logger) *slog.Logger {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() || !sc.IsSampled() {
		return log
	}
	return log.With(LogKeyTraceID, sc.TraceID().String(), LogKeySpanID, sc.SpanID().String())
}
