package tracing

import (
	"io"
	"net/http"
	"regexp"
	"strings"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// Attributes of Slack Web API spans.
const (
	// SlackMethodKey names the Slack Web API method ("chat.postMessage").
	SlackMethodKey = attribute.Key("slack.method")
	// SlackErrorKey is the error code of an answer {"ok": false, "error": "..."}
	// ("ratelimited", "channel_not_found"), which Slack sends with HTTP 200.
	SlackErrorKey = attribute.Key("slack.error")
)

// SlackClient returns a copy of c whose requests to the Slack Web API are traced
// (otelhttp): one client span per HTTP request, named "slack <method>" after the last
// element of the URL path (https://slack.com/api/chat.postMessage), with the HTTP
// method, status code and server address; an answer {"ok": false, "error": code} (HTTP
// 200, as Slack sends its errors) marks the span failed, with slack.error the code.
// Only requests made inside a trace (a turn)
// are traced; the others (Socket Mode's apps.connections.open, for example) pass as
// they are. A rate-limited call that slack-go retries shows as one span per attempt.
// Neither headers (the token) nor bodies are recorded.
func SlackClient(c *http.Client) *http.Client {
	out := *c
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	out.Transport = otelhttp.NewTransport(slackMethodTransport{next: next},
		otelhttp.WithFilter(func(r *http.Request) bool {
			return trace.SpanContextFromContext(r.Context()).IsValid()
		}),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
			return "slack " + SlackMethod(r)
		}),
	)
	return &out
}

// slackMethodTransport sets slack.method on the span otelhttp started for r.
type slackMethodTransport struct{ next http.RoundTripper }

func (t slackMethodTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	span := trace.SpanFromContext(r.Context())
	if !span.IsRecording() {
		return t.next.RoundTrip(r)
	}
	method := SlackMethod(r)
	span.SetAttributes(SlackMethodKey.String(method))
	if method == "upload" {
		// The upload URL's path is a ticket: keep only where it goes.
		span.SetAttributes(semconv.URLFull(r.URL.Scheme + "://" + r.URL.Host + "/upload/…"))
	}
	resp, err := t.next.RoundTrip(r)
	if err == nil && resp.Body != nil {
		resp.Body = &slackBody{ReadCloser: resp.Body, span: span}
	}
	return resp, err
}

// slackHead bounds the start of an answer slackBody looks at for "ok" and "error".
const slackHead = 512

// okTrue, okFalse and errorCode find Slack's verdict at the start of an answer.
var (
	okTrue    = regexp.MustCompile(`^\s*\{\s*"ok"\s*:\s*true`)
	okFalse   = regexp.MustCompile(`^\s*\{\s*"ok"\s*:\s*false`)
	errorCode = regexp.MustCompile(`"error"\s*:\s*"([^"]{1,100})"`)
)

// slackBody passes an answer's body on as it is read, and marks the span failed
// when its start says {"ok": false, "error": code}. It looks at each read until it
// knows (at most slackHead bytes), so the span is marked before otelhttp ends it
// (at the end of the body, or when it is closed).
type slackBody struct {
	io.ReadCloser
	span trace.Span
	head []byte
	done bool
}

func (b *slackBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if !b.done {
		b.head = append(b.head, p[:min(n, slackHead-len(b.head))]...)
		b.done = b.look(len(b.head) >= slackHead || err != nil)
		if b.done {
			b.head = nil
		}
	}
	return n, err
}

// look marks the span failed when the answer's start says so, and reports whether
// the verdict is known; final: no more of the start will come.
func (b *slackBody) look(final bool) bool {
	switch {
	case okTrue.Match(b.head):
		return true
	case okFalse.Match(b.head):
		code := ""
		if m := errorCode.FindSubmatch(b.head); m != nil {
			code = string(m[1])
		} else if final {
			code = "unknown"
		}
		if code != "" {
			b.span.SetAttributes(SlackErrorKey.String(code), ErrorTypeKey.String(code))
			b.span.SetStatus(codes.Error, code)
			return true
		}
	}
	return final
}

// SlackMethod returns the Slack Web API method r calls: the last element of its URL
// path under /api/ (https://slack.com/api/chat.postMessage); "upload" for a file's
// upload URL (files.getUploadURLExternal's, whose path ends in a ticket), and
// "unknown" for anything else, so that no id or ticket names a span.
func SlackMethod(r *http.Request) string {
	p := strings.TrimSuffix(r.URL.Path, "/")
	if i := strings.LastIndex(p, "/api/"); i >= 0 {
		if m := p[i+len("/api/"):]; m != "" && !strings.Contains(m, "/") {
			return m
		}
	}
	if strings.Contains(p, "/upload/") {
		return "upload"
	}
	return "unknown"
}
