package httpclient

import (
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
)

// NewSlack returns New's client for Slack's Web API: its transport holds at most
// SlackConnsPerHost connections to a host, all of which it keeps when idle, and
// BearerToken wraps it.
func NewSlack() *http.Client {
	tr := NewTransport()
	tr.MaxConnsPerHost = SlackConnsPerHost
	tr.MaxIdleConnsPerHost = SlackConnsPerHost
	return &http.Client{Transport: BearerToken(tr)}
}

// BearerToken wraps next so that the token of a Slack Web API call goes in the
// "Authorization: Bearer" header, never in the body: a POST with an
// application/x-www-form-urlencoded body that has a "token" field is sent without the
// field and with the header, the form Slack recommends
// (https://docs.slack.dev/apis/web-api/#basics). slack-go v0.34 puts the token in the
// form for most methods. The header keeps the token out of request bodies, and it is
// the only place the hardened emulator of `threadwright dev` takes a token from
// (docs/playground.md, "Playground security"). Other requests, and those that already have an
// Authorization header, pass unchanged.
func BearerToken(next http.RoundTripper) http.RoundTripper {
	return bearerTransport{next: next}
}

type bearerTransport struct{ next http.RoundTripper }

func (t bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if r.Method != http.MethodPost || ct != "application/x-www-form-urlencoded" || r.Body == nil ||
		r.Body == http.NoBody || r.Header.Get("Authorization") != "" {
		return t.next.RoundTrip(r)
	}
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return nil, err
	}
	out := r.Clone(r.Context())
	form, err := url.ParseQuery(string(body))
	if token := form.Get("token"); err == nil && token != "" {
		form.Del("token")
		body = []byte(form.Encode())
		out.Header.Set("Authorization", "Bearer "+token)
	}
	out.Body = io.NopCloser(strings.NewReader(string(body)))
	out.ContentLength = int64(len(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(string(body))), nil }
	return t.next.RoundTrip(out)
}
