package agents

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
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
	"github.com/threadwright/threadwright/internal/httpclient"
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
	// retries or the retry budget run out.
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
	DefaultBaseURL = "https://api.openai.com/v1"
	DefaultTimeout = 60 * time.Second
	// DefaultMaxRetries is 5 retries: up to 6 attempts, plus the waits that HTTP 429s
	// ask for (which the retry budget bounds, not this count).
	DefaultMaxRetries     = 5
	DefaultMaxElapsed     = 60 * time.Second
	DefaultInitialBackoff = 500 * time.Millisecond
	DefaultMaxBackoff     = 20 * time.Second
	DefaultMaxConcurrent  = 128
)

// ModelMetrics observes a Client's calls (package metrics implements it).
type ModelMetrics interface {
	// ModelCall is told of a call to model (the request's) that ended with outcome
	// (ok, empty, timeout, canceled, error) after d, waits included, with retries
	// attempts after the first and the tokens the API reported.
	ModelCall(model, outcome string, d time.Duration, retries, promptTokens, completionTokens int)
}

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
	// HTTPClient sends the requests; default a new client of package
	// internal/httpclient (connections kept for reuse, as many as MaxConcurrent,
	// HTTP/2 tried) whose wait for response headers only Timeout bounds. Leave its Timeout zero: streams are
	// bounded by Timeout below.
	HTTPClient *http.Client
	// Timeout bounds one attempt of a call, from the request to the end of the stream.
	// Default DefaultTimeout (60 s).
	Timeout time.Duration
	// MaxRetries is how many times a call is retried after a failed attempt, not
	// counting the first attempt: 5 allows 6 attempts (default DefaultMaxRetries;
	// negative: never retry, not even after HTTP 429). Retried: HTTP 5xx, attempt
	// timeouts, connection errors and errors inside the stream, each counting as one
	// retry; and HTTP 429, which does not count: the endpoint says when to come back
	// (Retry-After), and MaxElapsed bounds how long the call keeps coming back.
	MaxRetries int
	// MaxElapsed is the retry budget: it bounds the time from the first attempt to
	// the start of the last retry, waits included (default DefaultMaxElapsed, 60 s).
	// A wait that would cross it (a long Retry-After, a backoff, a wait for a slot)
	// ends the call with the last attempt's error instead.
	MaxElapsed time.Duration
	// InitialBackoff and MaxBackoff shape the exponential backoff between retries:
	// the wait starts near InitialBackoff, doubles per retry up to MaxBackoff, with
	// ±50 % jitter (defaults DefaultInitialBackoff, DefaultMaxBackoff). A server's
	// Retry-After (or OpenAI's retry-after-ms) header is a lower bound on the wait.
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	// MaxConcurrent bounds the attempts in flight through this Client at once
	// (default DefaultMaxConcurrent). The bound adapts to the endpoint's rate limit:
	// an HTTP 429 halves it (once per burst of 429s, not below 1), and it grows back
	// by one after each run of successes as long as the bound, up to MaxConcurrent.
	// Calls beyond it wait for their turn. A 429's Retry-After (or retry-after-ms)
	// also holds back every new attempt of the Client until it has passed (for
	// MaxElapsed at most). Limit reports the current bound.
	MaxConcurrent int
	// Logger receives a warning per retry and when the bound is lowered, and an info
	// line when it is back to MaxConcurrent; default slog.Default().
	Logger *slog.Logger
	// Metrics, when set, is told of every call (see ModelMetrics).
	Metrics ModelMetrics
}

// LogValue implements slog.LogValuer and leaves the API key out.
func (c ClientConfig) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("base_url", c.BaseURL),
		slog.Bool("api_key_set", c.APIKey != ""),
		slog.Duration("timeout", c.Timeout),
		slog.Int("max_retries", c.MaxRetries),
		slog.Duration("max_elapsed", c.MaxElapsed),
		slog.Int("max_concurrent", c.MaxConcurrent),
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
// every call and reassembling the stream, with retries, and bounds the calls in flight
// to the endpoint (see ClientConfig.MaxConcurrent). It is safe for concurrent use;
// share one Client per endpoint, so that its calls share the bound.
type Client struct {
	api            *openai.Client
	timeout        time.Duration
	maxRetries     int // -1: never retry
	maxElapsed     time.Duration
	initialBackoff time.Duration
	maxBackoff     time.Duration
	limiter        *limiter
	logger         *slog.Logger
	metrics        ModelMetrics
}

// NewClient returns a Client for cfg, filling in defaults.
func NewClient(cfg ClientConfig) *Client {
	c := &Client{
		timeout:        cmp.Or(cfg.Timeout, DefaultTimeout),
		maxRetries:     cmp.Or(cfg.MaxRetries, DefaultMaxRetries),
		maxElapsed:     cmp.Or(cfg.MaxElapsed, DefaultMaxElapsed),
		initialBackoff: cmp.Or(cfg.InitialBackoff, DefaultInitialBackoff),
		maxBackoff:     cmp.Or(cfg.MaxBackoff, DefaultMaxBackoff),
		logger:         cmp.Or(cfg.Logger, slog.Default()),
		metrics:        cfg.Metrics,
	}
	c.maxRetries = max(c.maxRetries, -1)
	limit := max(cmp.Or(cfg.MaxConcurrent, DefaultMaxConcurrent), 1)
	c.limiter = newLimiter(limit, c.maxElapsed, c.logger)

	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = cmp.Or(cfg.BaseURL, DefaultBaseURL)
	hc := cfg.HTTPClient
	if hc == nil {
		tr := httpclient.NewModelTransport(limit) // an idle connection for each attempt in flight
		tr.ResponseHeaderTimeout = 0              // each attempt's Timeout bounds it, and names it ErrTimeout
		hc = &http.Client{Transport: tr}
	}
	oc.HTTPClient = doer{next: hc}
	c.api = openai.NewClientWithConfig(oc)
	return c
}

// Limit returns how many attempts may be in flight through c at once now: between 1
// and ClientConfig.MaxConcurrent, lowered by HTTP 429s and raised by successes.
func (c *Client) Limit() int {
	limit, _, _ := c.limiter.current()
	return limit
}

// Waiting returns how many calls are waiting to send an attempt: for a slot under
// Limit, or for a Retry-After to pass.
func (c *Client) Waiting() int {
	_, _, waiting := c.limiter.current()
	return waiting
}

// traced is complete inside its span (trace.go: one span per call, retries
// included); Complete (client_metrics.go) adds the metrics.
func (c *Client) traced(ctx context.Context, req openai.ChatCompletionRequest) (Completion, error) {
	ctx, span := startChat(ctx, req)
	comp, err := c.complete(ctx, req)
	endChat(span, comp, err)
	return comp, err
}

// complete is Complete without its span and metrics.
func (c *Client) complete(ctx context.Context, req openai.ChatCompletionRequest) (Completion, error) {
	req.Stream = true
	req.StreamOptions = &openai.StreamOptions{IncludeUsage: true}

	bo := backoff.NewExponentialBackOff(
		backoff.WithInitialInterval(c.initialBackoff),
		backoff.WithMaxInterval(c.maxBackoff),
		backoff.WithMultiplier(2),
		backoff.WithRandomizationFactor(0.5),
		backoff.WithMaxElapsedTime(0), // bounded below, Retry-After included
	)
	sink := textSinkFrom(ctx)
	var (
		start   time.Time // of the first attempt
		retries int       // retries after errors; HTTP 429s are not counted
		comp    Completion
		lastErr error
	)
	for attempt := 1; ; attempt++ {
		round, err := c.acquire(ctx, attempt, start)
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return comp, fmt.Errorf("agents: chat completion: %w", ctxErr)
			}
			return comp, fmt.Errorf("agents: chat completion failed after %d attempts (no slot for a retry within %s): %w", attempt-1, c.maxElapsed, lastErr)
		}
		if attempt == 1 {
			start = time.Now()
		}
		if sink != nil && attempt > 1 {
			sink.Reset() // the text of the failed attempt is void
		}
		var hint *retryHint
		comp, hint, err = c.attempt(ctx, req, sink)
		comp.Attempts = attempt
		c.limiter.release(ctx, round, outcomeOf(err, hint), hint.after, hint.at)
		if err == nil || errors.Is(err, ErrEmptyResponse) {
			return comp, err
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return comp, fmt.Errorf("agents: chat completion: %w", ctxErr)
		}
		if !retryable(err) {
			return comp, fmt.Errorf("agents: chat completion: %w", err)
		}
		limited := hint.status == http.StatusTooManyRequests
		if !limited {
			retries++
		}
		if c.maxRetries < 0 || retries > c.maxRetries {
			return comp, fmt.Errorf("agents: chat completion failed after %d attempts: %w", attempt, err)
		}
		var wait time.Duration
		if limited && hint.after > 0 {
			wait = hint.after // the endpoint's own pace: the backoff does not grow
		} else {
			wait = max(bo.NextBackOff(), hint.after)
		}
		wait = max(wait, c.limiter.hold())
		if time.Since(start)+wait > c.maxElapsed {
			return comp, fmt.Errorf("agents: chat completion failed after %d attempts (next retry in %s would pass %s): %w", attempt, wait.Round(time.Millisecond), c.maxElapsed, err)
		}
		c.logger.WarnContext(ctx, "model call failed; retrying",
			slog.String("model", req.Model), slog.Int("attempt", attempt),
			slog.Duration("wait", wait), slog.Duration("retry_after", hint.after), slog.Any("err", err))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return comp, fmt.Errorf("agents: chat completion: %w", ctx.Err())
		case <-t.C:
		}
		lastErr = err
	}
}

// acquire takes a slot for an attempt (see limiter.acquire). A retry waits no longer
// than the retry budget that started with the first attempt at start.
func (c *Client) acquire(ctx context.Context, attempt int, start time.Time) (round uint64, err error) {
	if attempt == 1 {
		return c.limiter.acquire(ctx)
	}
	ctx, cancel := context.WithDeadline(ctx, start.Add(c.maxElapsed))
	defer cancel()
	return c.limiter.acquire(ctx)
}

// outcomeOf classifies an attempt's result for the limiter.
func outcomeOf(err error, hint *retryHint) outcome {
	switch {
	case err == nil || errors.Is(err, ErrEmptyResponse):
		return answered
	case hint.status == http.StatusTooManyRequests:
		return rateLimited
	default:
		return neutral
	}
}

// attempt makes one streamed call. hint tells what the HTTP response said (its zero
// value when there was none).
func (c *Client) attempt(ctx context.Context, req openai.ChatCompletionRequest, sink conversation.TextSink) (comp Completion, hint *retryHint, err error) {
	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	hint = new(retryHint)
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
		return Completion{}, hint, err
	}
	defer stream.Close()
	var a assembler
	for {
		raw, err := stream.RecvRaw() // decoded as a chunk: only what the assembler reads
		if errors.Is(err, io.EOF) {
			hint.drain()
			break
		}
		var ev chunk
		if err == nil {
			err = json.Unmarshal(raw, &ev)
		}
		if err != nil {
			return Completion{}, hint, fmt.Errorf("read stream: %w", err)
		}
		a.add(&ev)
		if sink != nil {
			for i := range ev.Choices {
				if d := ev.Choices[i].Delta.Content; ev.Choices[i].Index == 0 && d != "" {
					sink.Write(d)
				}
			}
		}
	}
	comp = a.completion()
	if comp.Content == "" && len(comp.ToolCalls) == 0 {
		return comp, hint, ErrEmptyResponse
	}
	return comp, hint, nil
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

// TextSinkFrom returns the sink ctx carries (WithTextSink), or nil. A Completer that
// does not stream, such as the replay of a recording (package eval/cassette), writes
// each completion's content to it whole, so that the answer reaches the thread as
// Client's would.
func TextSinkFrom(ctx context.Context) conversation.TextSink { return textSinkFrom(ctx) }

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

// doer sends the HTTP requests of a Client's attempts. For a failed response (HTTP
// status 400 or above, as go-openai decides) it records the status, the Retry-After
// hint and the time of arrival in the attempt's retryHint (go-openai's errors keep no
// response headers), and reads and closes the body, which go-openai reads but never
// closes. It keeps a stream's body in the hint, for retryHint.drain.
type doer struct{ next *http.Client }

// maxErrorBody bounds the error body doer reads.
const maxErrorBody = 1 << 20

type retryHintKey struct{}

// retryHint is what doer learned of an attempt's response.
type retryHint struct {
	status int           // HTTP status of a failed response; 0 otherwise
	after  time.Duration // Retry-After of a failed 429 or 5xx; 0 without one
	at     time.Time     // when the failed response arrived
	body   io.Reader     // body of a successful response
}

func (d doer) Do(req *http.Request) (*http.Response, error) {
	resp, err := d.next.Do(req)
	if err != nil {
		return resp, err
	}
	h, _ := req.Context().Value(retryHintKey{}).(*retryHint)
	if h == nil {
		return resp, nil
	}
	if resp.StatusCode >= http.StatusOK && resp.StatusCode < http.StatusBadRequest {
		h.body = resp.Body
		return resp, nil
	}
	h.status, h.at = resp.StatusCode, time.Now()
	if retryableStatus(resp.StatusCode) {
		h.after = parseRetryAfter(resp.Header, h.at)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("read the body of HTTP %d: %w", resp.StatusCode, err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}

// drain reads what is left of a stream after its last event ("data: [DONE]"), such as
// the end of the chunked HTTP/1.1 body, so that closing the body returns the
// connection to the pool instead of closing it. go-openai stops reading at [DONE].
func (h *retryHint) drain() {
	if h.body != nil {
		_, _ = io.CopyN(io.Discard, h.body, 4<<10)
	}
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
