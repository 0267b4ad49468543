package httpclient

import (
	"io"
	"net/http"
	"net/url"
	"strings"
)

// NewSlack returns the client for Slack's Web API: BearerToken on a
// NewSlackTransport. Its Timeout is zero: bound each call with its context.
func NewSlack() *http.Client {
	return &http.Client{Transport: BearerToken(NewSlackTransport())}
}

// NewSlackTransport returns a NewTransport that holds at most SlackConnsPerHost
// connections to a host and keeps them all when idle.
func NewSlackTransport() *http.Transport {
	tr := NewTransport()
	tr.MaxConnsPerHost = SlackConnsPerHost
	tr.MaxIdleConnsPerHost = SlackConnsPerHost
	return tr
}

// BearerToken wraps next so that the token of a Slack Web API call goes in the
// "Authorization: Bearer" header, never in the body: a POST with an
// application/x-www-form-urlencoded body that has a "token" field is sent without the
// field and with the header, the form Slack recommends
// (docs/architecture.md). slack-go v0.35 puts the token in the
// form for most methods. The header keeps the token out of request bodies, and it is
// the only place the hardened emulator of `threadwright dev` takes a token from
// (docs/playground.md, "Playground security"). Other requests, and those that already have an
// Authorization header, pass unchanged.
func BearerToken(next http.RoundTripper) http.RoundTripper {
	return bearerTransport{next: next}
}

type bearerTransport struct{ next http.RoundTripper }

// maxFormBody bounds the body bearerTransport sizes its buffer by (ContentLength);
// a longer form is read all the same, in steps.
const maxFormBody = 1 << 20

func (t bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody ||
		!isForm(r.Header.Get("Content-Type")) || r.Header.Get("Authorization") != "" {
		return t.next.RoundTrip(r)
	}
	var form strings.Builder
	if r.ContentLength > 0 {
		form.Grow(int(min(r.ContentLength, maxFormBody)))
	}
	_, err := io.Copy(&form, r.Body)
	r.Body.Close()
	if err != nil {
		return nil, err
	}
	out := *r // the caller's request stays as it was: only Header and the body change
	out.Header = r.Header.Clone()
	body := form.String()
	if token, rest, ok := cutToken(body); ok {
		body = rest
		out.Header.Set("Authorization", "Bearer "+token)
	}
	out.Body, out.ContentLength = io.NopCloser(strings.NewReader(body)), int64(len(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }
	if body == "" { // the token was the only field (auth.test)
		out.Body = http.NoBody
		out.GetBody = func() (io.ReadCloser, error) { return http.NoBody, nil }
	}
	return t.next.RoundTrip(&out)
}

// isForm reports whether contentType's media type is
// application/x-www-form-urlencoded, parameters aside, without the map of them
// mime.ParseMediaType makes.
func isForm(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	return strings.EqualFold(strings.TrimSpace(mt), "application/x-www-form-urlencoded")
}

// cutToken returns the value of the first non-empty "token" field of form
// (URL-encoded, as url.Values.Encode writes it; a field's name may be percent-encoded
// too, as url.ParseQuery reads it) and form without any of its "token" fields; ok is
// false, and form is to be sent as it is, when form has no such field with a valid,
// non-empty value. It scans form once instead of parsing it into url.Values and
// encoding it again.
func cutToken(form string) (token, rest string, ok bool) {
	if !strings.Contains(form, "token=") && !strings.Contains(form, "%") {
		return "", form, false
	}
	var b strings.Builder
	b.Grow(len(form))
	for field := range strings.SplitSeq(form, "&") {
		name, value, _ := strings.Cut(field, "=")
		if strings.ContainsAny(name, "%+") {
			if n, err := url.QueryUnescape(name); err == nil {
				name = n
			}
		}
		if name != "token" {
			if b.Len() > 0 {
				b.WriteByte('&')
			}
			b.WriteString(field)
			continue
		}
		// Every token field goes, as url.Values.Del drops them all; the first valid,
		// non-empty one is the token.
		if t, err := url.QueryUnescape(value); !ok && err == nil && t != "" {
			token, ok = t, true
		}
	}
	if !ok {
		return "", form, false
	}
	return token, b.String(), true
}
