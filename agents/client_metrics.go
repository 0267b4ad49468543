package agents

import (
	"context"
	"errors"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/conversation"
)

// Complete runs req as a streamed chat completion (stream: true, with
// stream_options.include_usage) and returns the reassembled result.
//
// Each attempt first takes a slot under the Client's limit (ClientConfig.MaxConcurrent),
// waiting while the limit is reached or an HTTP 429's Retry-After lasts. Complete
// retries HTTP 5xx, attempt timeouts, connection errors and errors inside the stream
// with exponential backoff and jitter (a Retry-After is a lower bound on the wait), up
// to ClientConfig.MaxRetries times; it retries HTTP 429 once the Retry-After (OpenAI's
// retry-after-ms first) has passed, or after the backoff without one, without
// counting it as a retry; all within the retry budget ClientConfig.MaxElapsed. It never
// retries other 4xx errors, nor after ctx is done.
//
// Errors: ctx's error when ctx ends, also while waiting for a slot; ErrEmptyResponse
// (with the Completion and its usage) when the model returned nothing usable;
// otherwise the last attempt's error, wrapped: errors.As finds *openai.APIError
// (HTTPStatusCode, Message) for an HTTP error, and errors.Is finds ErrTimeout for a
// timeout. A cut-off answer (finish_reason "length") is not an error: see
// Completion.Truncated.
//
// When ctx carries a conversation.TextSink (WithTextSink), it is given the content
// deltas of every attempt as they arrive (not refusals nor tool-call arguments), and
// Reset before each retry.
//
// When ctx carries a conversation.UsageMeter (conversation.WithUsageMeter), the call's
// usage is added to it under req.Model, also when the call failed.
func (c *Client) Complete(ctx context.Context, req openai.ChatCompletionRequest) (Completion, error) {
	start := time.Now()
	comp, err := c.traced(ctx, req)
	conversation.UsageMeterFrom(ctx).Add(req.Model, comp.Usage)
	if c.metrics == nil {
		return comp, err
	}
	c.metrics.ModelCall(req.Model, modelOutcome(ctx, err), time.Since(start), max(comp.Attempts-1, 0),
		comp.Usage.PromptTokens, comp.Usage.CompletionTokens)
	return comp, err
}

// modelOutcome names the outcome of a call that returned err under ctx.
func modelOutcome(ctx context.Context, err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, ErrEmptyResponse):
		return "empty"
	case errors.Is(err, ErrTimeout), errors.Is(ctx.Err(), context.DeadlineExceeded):
		return "timeout"
	case ctx.Err() != nil:
		return "canceled"
	default:
		return "error"
	}
}
