package redact

import (
	"context"
	"fmt"
	"log/slog"
)

// Handler is a slog.Handler that scrubs the secrets of a Redactor out of every
// record before passing it to the handler it wraps: the message, and every attribute
// value, LogValuers resolved and groups walked. Errors and fmt.Stringers become their
// scrubbed text; any other value whose printed form (%+v) holds a secret becomes that
// form scrubbed, and is kept as it is otherwise.
type Handler struct {
	next slog.Handler
	r    *Redactor
}

var _ slog.Handler = (*Handler)(nil)

// NewHandler returns next wrapped so that r scrubs every record it handles. With a
// Redactor that scrubs nothing it returns next itself.
func NewHandler(next slog.Handler, r *Redactor) slog.Handler {
	if r.Len() == 0 {
		return next
	}
	return &Handler{next: next, r: r}
}

// Enabled reports whether the wrapped handler handles records of level.
func (h *Handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

// Handle scrubs rec and passes it on.
func (h *Handler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.r.String(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

// WithAttrs scrubs attrs and passes them on.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		clean[i] = h.attr(a)
	}
	return &Handler{next: h.next.WithAttrs(clean), r: h.r}
}

// WithGroup passes the group on.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{next: h.next.WithGroup(name), r: h.r}
}

// attr returns a with its value scrubbed.
func (h *Handler) attr(a slog.Attr) slog.Attr {
	a.Value = h.value(a.Value.Resolve())
	return a
}

func (h *Handler) value(v slog.Value) slog.Value {
	switch v.Kind() {
	case slog.KindString:
		return slog.StringValue(h.r.String(v.String()))
	case slog.KindGroup:
		attrs := v.Group()
		clean := make([]slog.Attr, len(attrs))
		for i, a := range attrs {
			clean[i] = h.attr(a)
		}
		return slog.GroupValue(clean...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case nil:
			return v
		case error:
			return h.text(v, x.Error)
		case fmt.Stringer:
			return h.text(v, x.String)
		case []byte:
			if s := string(x); h.r.Contains(s) {
				return slog.StringValue(h.r.String(s))
			}
			return v
		default:
			if s := fmt.Sprintf("%+v", x); h.r.Contains(s) {
				return slog.StringValue(h.r.String(s))
			}
			return v
		}
	}
	return v // numbers, booleans, times and durations hold no secret text
}

// text returns the scrubbed result of f, the Error or String method of v's value; v
// itself when f panics (a nil pointer receiver), which the wrapped handler reports as
// slog's handlers do.
func (h *Handler) text(v slog.Value, f func() string) (out slog.Value) {
	defer func() {
		if recover() != nil {
			out = v
		}
	}()
	return slog.StringValue(h.r.String(f()))
}
