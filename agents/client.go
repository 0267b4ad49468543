package agents

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cenkalti/backoff/v4"
	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/conversation"
)

// Errors of model calls; test with errors.Is. Each also has a UserMessage method with
// a short text fit to show in Slack (conversation.ErrorReply uses it).
var (
	// ErrEmptyResponse means the model answered with no choices, or with neither
	// content nor tool calls. Client.Complete returns it without retrying, together
	// with the Completion (its Usage still counts).
	ErrEmptyResponse error = &modelError{
		msg:  "agents: empty model response",
		user: "The model returned an empty answer. Please try again, or rephrase the question.",
	}
	// ErrTimeout means one attempt of a model call took longer than
	// ClientConfig.Timeout. It is retried; Complete returns it (wrapped) when the
	// retries run out.
	ErrTimeout error = &modelError{
		msg:  "agents: model call timed out",
		user: "The model did not answer in time. Please try again in a moment.",
	}
)

// modelError is a model-call failure with a message for the user.
type modelError struct{ msg, user string }

func (e *modelError) Error() string { return e.msg }

// UserMessage returns the text to show in Slack.
func (e *modelError) UserMessage() string { return e.user }

// Defaults of ClientConfig.
const (
	DefaultBaseURL        = "https://api.openai.com/v1"
	DefaultTimeout        = 60 * time.Second
	DefaultMaxRetries     = 3
	DefaultMaxElapsed     = 2 * time.Minute
	DefaultInitialBackoff = 500 * time.Millisecond
	DefaultMaxBackoff     = 20 * time.Second
)

// ClientConfig configures a Client. The zero value of every field picks its default.
type ClientConfig struct {
	// BaseURL is the API's base URL, ending in "/v1" for most servers
	// (OPENAI_BASE_URL): OpenAI, Azure OpenAI's OpenAI-compatible endpoint, vLLM,
	// Ollama ("http://localhost:11434/v1"), LM Studio, openaitest.Server.URL.
	// Default DefaultBaseURL.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <key>" (OPENAI_API_KEY); empty sends no
	// header. It is never logged.
	APIKey string
	// HTTPClient sends the requests; default a new http.Client. Leave its Timeout
	// zero: streams are bounded by Timeout below.
	HTTPClient *http.Client
	// Timeout bounds one attempt of a call, from the request to the end of the stream.
	// Default DefaultTimeout (60 s).
	Timeout time.Duration
	// MaxRetries is how many times a failed call is retried after its first attempt
	// (default DefaultMaxRetries; negative: never retry). Retried: HTTP 429 and 5xx,
	// attempt timeouts, connection errors and errors inside the stream.
	MaxRetries int
	// MaxElapsed bounds the time from the first attempt to the start of the last
	// retry, waits included (default DefaultMaxElapsed). A Retry-After that would
	// cross it ends the call with the error instead.
	MaxElapsed time.Duration
	// InitialBackoff and MaxBackoff shape the exponential backoff between retries:
	// the wait starts near InitialBackoff, doubles per retry up to MaxBackoff, with
	// ±50 % jitter (defaults DefaultInitialBackoff, DefaultMaxBackoff). A server's
	// Retry-After (or OpenAI's retry-after-ms) header is a lower bound on the wait.
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	// Logger receives a warning per retry; default slog.Default().
	Logger *slog.Logger
}

// LogValue implements slog.LogValuer and leaves the API key out.
func (c ClientConfig) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("base_url", c.BaseURL),
		slog.Bool("api_key_set", c.APIKey != ""),
		slog.Duration("timeout", c.Timeout),
		slog.Int("max_retries", c.MaxRetries),
	)
}

// String describes the configuration without the API key.
func (c ClientConfig) String() string {
	return fmt.Sprintf("agents.ClientConfig{BaseURL: %q, APIKey set: %t}", c.BaseURL, c.APIKey != "")
}

// GoString is String, so that %#v does not print the API key either.
func (c ClientConfig) GoString() string { return c.String() }

// Completer runs one chat completion. *Client implements it; the executor and the
// scope checker use it, so a decorator (metrics, caching) or a test double can stand in.
type Completer interface {
	Complete(ctx context.Context, req openai.ChatCompletionRequest) (Completion, error)
}

var _ Completer = (*Client)(nil)

// Client calls an OpenAI-compatible Chat Completions API through go-openai, streaming
// every call and reassembling the stream, with retries. It is safe for concurrent use.
type Client struct {
	api            *openai.Client
	timeout        time.Duration
	maxRetries     int
	maxElapsed     time.Duration
	initialBackoff time.Duration
	maxBackoff     time.Duration
	logger         *slog.Logger
}

// NewClient returns a Client for cfg, filling in defaults.
func NewClient(cfg ClientConfig) *Client {
	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = orDefault(cfg.BaseURL, DefaultBaseURL)
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	oc.HTTPClient = retryAfterDoer{next: hc}
	c := &Client{
		api:            openai.NewClientWithConfig(oc),
		timeout:        orDefault(cfg.Timeout, DefaultTimeout),
		maxRetries:     orDefault(cfg.MaxRetries, DefaultMaxRetries),
		maxElapsed:     orDefault(cfg.MaxElapsed, DefaultMaxElapsed),
		initialBackoff: orDefault(cfg.InitialBackoff, DefaultInitialBackoff),
		maxBackoff:     orDefault(cfg.MaxBackoff, DefaultMaxBackoff),
		logger:         cfg.Logger,
	}
	if c.maxRetries < 0 {
		c.maxRetries = 0
	}
	c.logger = orLogger(c.logger)
	return c
}

// orDefault returns v, or def when v is the zero value.
func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Completion is a chat completion reassembled from its stream: one choice.
type Completion struct {
	// Content is the assistant message's text (choices[0].message.content); when the
	// model refused (choices[0].message.refusal) and wrote no content, the refusal.
	Content string
	// ToolCalls are the function calls the model asked for, in the order of their
	// index in the stream, each with its id, type "function", name and complete JSON
	// arguments (as the model wrote them: not validated).
	ToolCalls []openai.ToolCall
	// FinishReason is choices[0].finish_reason: "stop", "tool_calls", "length",
	// "content_filter", or "" when the stream ended without one.
	FinishReason openai.FinishReason
	// Truncated is true when FinishReason is "length": the answer was cut off by the
	// token limit and Content (or the last tool call's arguments) is partial.
	Truncated bool
	// Usage is the call's token usage (the stream's usage chunk, requested with
	// stream_options.include_usage); zero when the server sent none. Failed attempts
	// that were retried are not counted: the API reports no usage for them.
	Usage conversation.Usage
	// Model is the model that answered, as the server reports it.
	Model string
	// Attempts is the number of HTTP attempts the call took (1 without retries).
	Attempts int
}

// Message returns the completion as the assistant message to append to the
// conversation for the next call: role "assistant", content and tool calls.
func (c Completion) Message() openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: c.Content, ToolCalls: c.ToolCalls}
}

// Complete runs req as a streamed chat completion (stream: true, with
// stream_options.include_usage) and returns the reassembled result. It retries with
// exponential backoff and jitter on HTTP 429 and 5xx (honouring Retry-After), attempt
// timeouts and connection errors, within ClientConfig's MaxRetries and MaxElapsed; it
// never retries other 4xx errors, nor after ctx is done.
//
// Errors: ctx's error when ctx ends; ErrEmptyResponse (with the Completion and its
// usage) when the model returned nothing usable; otherwise the last attempt's error,
// wrapped: errors.As finds *openai.APIError (HTTPStatusCode, Message) for an HTTP error,
// and errors.Is finds ErrTimeout for a timeout. A cut-off answer (finish_reason
// "length") is not an error: see Completion.Truncated.
//
// When ctx carries a conversation.TextSink (WithTextSink), it is given the content
// deltas of every attempt as they arrive (not refusals nor tool-call arguments), and
// Reset before each retry.
func (c *Client) Complete(ctx context.Context, req openai.ChatCompletionRequest) (Completion, error) {
	req.Stream = true
	req.StreamOptions = &openai.StreamOptions{IncludeUsage: true}

	bo := backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(c.initialBackoff),
		backoff.WithMaxInterval(c.maxBackoff),
		backoff.WithMultiplier(2),
		backoff.WithRandomizationFactor(0.5),
		backoff.WithMaxElapsedTime(0), // bounded below, Retry-After included
	)
	start := time.Now()
	sink := textSinkFrom(ctx)
	for attempt := 1; ; attempt++ {
		if sink != nil && attempt > 1 {
			sink.Reset() // the text of the failed attempt is void
		}
		comp, retryAfter, err := c.attempt(ctx, req, sink)
		comp.Attempts = attempt
		if err == nil || errors.Is(err, ErrEmptyResponse) {
			return comp, err
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return comp, fmt.Errorf("agents: chat completion: %w", ctxErr)
		}
		if !retryable(err) {
			return comp, fmt.Errorf("agents: chat completion: %w", err)
		}
		if attempt > c.maxRetries {
			return comp, fmt.Errorf("agents: chat completion failed after %d attempts: %w", attempt, err)
		}
		wait := max(bo.NextBackOff(), retryAfter)
		if time.Since(start)+wait > c.maxElapsed {
			return comp, fmt.Errorf("agents: chat completion failed after %d attempts (next retry in %s would pass %s): %w", attempt, wait.Round(time.Millisecond), c.maxElapsed, err)
		}
		c.logger.WarnContext(ctx, "model call failed; retrying",
			slog.String("model", req.Model), slog.Int("attempt", attempt),
			slog.Duration("wait", wait), slog.Duration("retry_after", retryAfter), slog.Any("err", err))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return comp, fmt.Errorf("agents: chat completion: %w", ctx.Err())
		case <-t.C:
		}
	}
}

// attempt makes one streamed call. retryAfter is the server's Retry-After hint of a
// failed HTTP response (0 without one).
func (c *Client) attempt(ctx context.Context, req openai.ChatCompletionRequest, sink conversation.TextSink) (comp Completion, retryAfter time.Duration, err error) {
	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	hint := new(retryHint)
	actx = context.WithValue(actx, retryHintKey{}, hint)

	defer func() {
		// A failure caused by the attempt's own deadline is a timeout, whatever error
		// value the transport chose to report it with.
		if err != nil && ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("%w after %s: %w", ErrTimeout, c.timeout, err)
		}
	}()

	stream, err := c.api.CreateChatCompletionStream(actx, req)
	if err != nil {
		return Completion{}, hint.after, err
	}
	defer stream.Close()
	var a assembler
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Completion{}, 0, fmt.Errorf("read stream: %w", err)
		}
		a.add(&chunk)
		if sink != nil {
			for i := range chunk.Choices {
				if d := chunk.Choices[i].Delta.Content; chunk.Choices[i].Index == 0 && d != "" {
					sink.Write(d)
				}
			}
		}
	}
	comp = a.completion()
	if comp.Content == "" && len(comp.ToolCalls) == 0 {
		return comp, 0, ErrEmptyResponse
	}
	return comp, 0, nil
}

type textSinkKey struct{}

// WithTextSink returns ctx carrying sink, to which Client.Complete reports the content
// of its completions as it streams (see Complete). A nil sink returns ctx unchanged.
func WithTextSink(ctx context.Context, sink conversation.TextSink) context.Context {
	if sink == nil {
		return ctx
	}
	return context.WithValue(ctx, textSinkKey{}, sink)
}

// textSinkFrom returns the sink ctx carries, or nil.
func textSinkFrom(ctx context.Context) conversation.TextSink {
	s, _ := ctx.Value(textSinkKey{}).(conversation.TextSink)
	return s
}

// retryable reports whether a failed attempt may succeed when tried again.
func retryable(err error) bool {
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) {
		// Status 0: an error event inside a stream that had started, a server-side
		// failure.
		return apiErr.HTTPStatusCode == 0 || retryableStatus(apiErr.HTTPStatusCode)
	}
	var reqErr *openai.RequestError
	if errors.As(err, &reqErr) {
		return retryableStatus(reqErr.HTTPStatusCode)
	}
	var netErr net.Error
	return errors.Is(err, ErrTimeout) ||
		errors.As(err, &netErr) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED)
}

func retryableStatus(code int) bool {
	return code == http.StatusTooManyRequests || code >= 500
}

// retryAfterDoer records the Retry-After hint of a failed response in the request's
// context (go-openai's errors do not keep response headers).
type retryAfterDoer struct{ next *http.Client }

type retryHintKey struct{}

type retryHint struct{ after time.Duration }

func (d retryAfterDoer) Do(req *http.Request) (*http.Response, error) {
	resp, err := d.next.Do(req)
	if err == nil && retryableStatus(resp.StatusCode) {
		if h, ok := req.Context().Value(retryHintKey{}).(*retryHint); ok {
			h.after = parseRetryAfter(resp.Header, time.Now())
		}
	}
	return resp, err
}

// parseRetryAfter reads OpenAI's retry-after-ms header (milliseconds) or the standard
// Retry-After header (seconds or an HTTP date, RFC 9110 §10.2.3). It returns 0 when
// neither is present or valid.
func parseRetryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
