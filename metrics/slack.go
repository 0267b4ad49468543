package metrics

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"time"
)

// slackMethods are the Slack Web API methods threadwright calls; other methods are
// counted as Other.
var slackMethods = NewBound(0,
	"api.test", "apps.connections.open", "auth.test",
	"assistant.threads.setStatus", "assistant.threads.setSuggestedPrompts", "assistant.threads.setTitle",
	"chat.appendStream", "chat.delete", "chat.getPermalink", "chat.postEphemeral", "chat.postMessage",
	"chat.startStream", "chat.stopStream", "chat.update",
	"conversations.history", "conversations.info", "conversations.open", "conversations.replies",
	"files.completeUploadExternal", "files.getUploadURLExternal", "files.upload",
	"reactions.add", "reactions.remove", "users.info",
	"views.open", "views.push", "views.update",
)

// slackMethod returns the label of a request to path: the Web API method of
// /api/<method>, "upload" for a file upload URL (files.getUploadURLExternal's), or
// Other.
func slackMethod(path string) string {
	if i := strings.LastIndex(path, "/api/"); i >= 0 {
		return slackMethods.Value(path[i+len("/api/"):])
	}
	if strings.Contains(path, "/upload") {
		return "upload"
	}
	return Other
}

// SlackClient returns a copy of c whose transport counts and times every HTTP
// request to the Slack Web API (threadwright_slack_api_requests_total{method,outcome},
// threadwright_slack_api_request_duration_seconds{method}); c itself for a nil
// Metrics. Pass it to slack.OptionHTTPClient before slack.OptionRetryConfig, so
// that each retry is a request of its own: a rate-limited retry is a request whose
// outcome is rate_limited (HTTP 429) followed by another.
func (m *Metrics) SlackClient(c *http.Client) *http.Client {
	if m == nil {
		return c
	}
	cc := *c
	next := cc.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	cc.Transport = &slackTransport{next: next, m: m}
	return &cc
}

// slackTransport is SlackClient's RoundTripper.
type slackTransport struct {
	next http.RoundTripper
	m    *Metrics
}

// RoundTrip sends req and records its outcome: network_error without a response,
// rate_limited for HTTP 429, http_error for another status from 400, error for a
// JSON answer with "ok": false (Slack's errors come with HTTP 200), ok otherwise.
func (t *slackTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	method := slackMethod(req.URL.Path)
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	outcome := "ok"
	switch {
	case err != nil:
		outcome = "network_error"
	case resp.StatusCode == http.StatusTooManyRequests:
		outcome = "rate_limited"
	case resp.StatusCode >= 400:
		outcome = "http_error"
	case isJSON(resp.Header.Get("Content-Type")):
		if slackNotOK(resp) {
			outcome = "error"
		}
	}
	t.m.slackRequests.WithLabelValues(method, outcome).Inc()
	t.m.slackDuration.WithLabelValues(method).Observe(seconds(time.Since(start)))
	return resp, err
}

// isJSON reports whether contentType's media type is application/json (any
// parameters, such as charset, aside). It reads the media type without
// mime.ParseMediaType, which allocates a map of the parameters on every Slack call.
func isJSON(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	return strings.EqualFold(strings.TrimSpace(mt), "application/json")
}

// okPeek is how much of a JSON answer slackNotOK reads ahead: Slack puts "ok" first.
const okPeek = 64

// slackNotOK reports whether the JSON answer of resp starts with "ok": false. It
// reads ahead up to okPeek bytes into a body that then replaces resp.Body and gives
// them back first, so the caller still reads the whole answer; that body is the one
// allocation of the check.
func slackNotOK(resp *http.Response) bool {
	b := &peekedBody{body: resp.Body}
	n, err := io.ReadFull(resp.Body, b.head[:])
	b.n = n
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		b.err = err // given after the bytes read
	}
	resp.Body = b
	var compact [okPeek]byte // the head without JSON's whitespace
	c := 0
	for _, ch := range b.head[:n] {
		switch ch {
		case ' ', '\t', '\n', '\r':
		default:
			compact[c] = ch
			c++
		}
	}
	return bytes.Contains(compact[:c], []byte(`"ok":false`))
}

// peekedBody gives back the bytes slackNotOK read ahead, then the rest of body.
type peekedBody struct {
	body io.ReadCloser
	head [okPeek]byte
	n    int   // bytes of head read ahead
	off  int   // bytes of head given back
	err  error // the error reading ahead ended with, given once head is
}

func (b *peekedBody) Read(p []byte) (int, error) {
	if b.off < b.n {
		n := copy(p, b.head[b.off:b.n])
		b.off += n
		return n, nil
	}
	if b.err != nil {
		return 0, b.err
	}
	return b.body.Read(p)
}

func (b *peekedBody) Close() error { return b.body.Close() }
