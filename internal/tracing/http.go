package tracing

import (
	"net/http"
	"path"
	"strings"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// SlackMethodKey is the attribute naming the Slack Web API method of a span
// ("chat.postMessage").
const SlackMethodKey = attribute.Key("slack.method")

// SlackClient returns a copy of c whose requests to the Slack Web API are traced
// (otelhttp): one client span per HTTP request, named "slack <method>" after the last
// element of the URL path (https://slack.com/api/chat.postMessage), with the HTTP
// method, status code and server address. Only requests made inside a trace (a turn)
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
	if span := trace.SpanFromContext(r.Context()); span.IsRecording() {
		span.SetAttributes(SlackMethodKey.String(SlackMethod(r)))
	}
	return t.next.RoundTrip(r)
}

// SlackMethod returns the Slack Web API method r calls: the last element of its URL
// path.
func SlackMethod(r *http.Request) string {
	m := path.Base(strings.TrimSuffix(r.URL.Path, "/"))
	if m == "." || m == "/" {
		return "unknown"
	}
	return m
}
