package assistant

import (
	"context"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/turns"
	"github.com/threadwright/threadwright/internal/tracing"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
)

// tracedScope traces a ScopeChecker: a span "scope_check" with the verdict.
type tracedScope struct{ next conversation.ScopeChecker }

func (t tracedScope) CheckScope(ctx context.Context, p conversation.Prompt) (conversation.Verdict, error) {
	ctx, span := tracing.Child(ctx, "scope_check")
	v, err := t.next.CheckScope(ctx, p)
	if err == nil {
		span.SetAttributes(turns.TraceKeyInScope.Bool(v.InScope),
			semconv.GenAIUsageInputTokens(v.Usage.PromptTokens), semconv.GenAIUsageOutputTokens(v.Usage.CompletionTokens))
	}
	tracing.End(span, err)
	return v, err
}
