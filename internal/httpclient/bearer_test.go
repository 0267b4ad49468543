package httpclient_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/internal/httpclient"
)

// roundTripFunc records the request a transport passes on.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// sent is what BearerToken passed on for one request.
type sent struct {
	auth, body, getBody string
	length              int64
}

func passOn(t *testing.T, req *http.Request) sent {
	t.Helper()
	var got sent
	rt := httpclient.BearerToken(roundTripFunc(func(r *http.Request) (*http.Response, error) {
		got.auth = r.Header.Get("Authorization")
		got.length = r.ContentLength
		if r.Body != nil {
			b, _ := io.ReadAll(r.Body)
			got.body = string(b)
		}
		if r.GetBody != nil {
			rc, _ := r.GetBody()
			b, _ := io.ReadAll(rc)
			got.getBody = string(b)
		}
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: r}, nil
	}))
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return got
}

func formRequest(method, form string) *http.Request {
	req, _ := http.NewRequest(method, "https://slack.com/api/chat.postMessage", strings.NewReader(form))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return req
}

// TestBearerToken: a form POST's token field moves to the Authorization header, the
// other fields stay, and the body can be sent again (slack-go's retries); other
// requests pass unchanged.
func TestBearerToken(t *testing.T) {
	t.Run("FormToken", func(t *testing.T) {
		form := url.Values{"token": {"xoxb-secret"}, "channel": {"C1"}, "text": {"a & b = c"}}
		req := formRequest(http.MethodPost, form.Encode())
		got := passOn(t, req)
		if got.auth != "Bearer xoxb-secret" {
			t.Errorf("Authorization %q", got.auth)
		}
		fields, err := url.ParseQuery(got.body)
		if err != nil || fields.Has("token") || fields.Get("channel") != "C1" || fields.Get("text") != "a & b = c" {
			t.Errorf("body %q", got.body)
		}
		if got.length != int64(len(got.body)) || got.getBody != got.body || strings.Contains(got.getBody, "secret") {
			t.Errorf("length %d, GetBody %q for body %q", got.length, got.getBody, got.body)
		}
		if req.Header.Get("Authorization") != "" {
			t.Error("the caller's request was changed")
		}
	})
	// The token field is found wherever url.Values.Encode put it, with its value
	// unescaped; the other fields stay as they were written.
	for _, tc := range []struct{ name, form, auth, body string }{
		{"Middle", "a=1&token=xoxb-1&z=2", "Bearer xoxb-1", "a=1&z=2"},
		{"Last", "a=1&token=xoxb-1", "Bearer xoxb-1", "a=1"},
		{"Alone", "token=xoxb-1", "Bearer xoxb-1", ""},
		{"Escaped", "a=x%26y&token=xoxb-a%2Bb%20c", "Bearer xoxb-a+b c", "a=x%26y"},
		{"Twice", "token=xoxb-1&a=1&token=xoxb-2", "Bearer xoxb-1", "a=1"},
		{"NotAPrefix", "mytoken=x&token=xoxb-1", "Bearer xoxb-1", "mytoken=x"},
		{"Empty", "a=1&token=", "", "a=1&token="},
		{"BadEscape", "token=xoxb-%zz&a=1", "", "token=xoxb-%zz&a=1"},
		{"EscapedName", "a=1&t%6Fken=xoxb-1", "Bearer xoxb-1", "a=1"},
		{"EmptyThenToken", "token=&a=1&token=xoxb-2", "Bearer xoxb-2", "a=1"},
		{"BadEscapeThenToken", "token=%zz&token=xoxb-2&a=1", "Bearer xoxb-2", "a=1"},
	} {
		t.Run("Form"+tc.name, func(t *testing.T) {
			req := formRequest(http.MethodPost, tc.form)
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
			got := passOn(t, req)
			if got.auth != tc.auth || got.body != tc.body || got.getBody != tc.body || got.length != int64(len(tc.body)) {
				t.Errorf("passed on Authorization %q, body %q (GetBody %q, length %d); want %q, %q", got.auth, got.body, got.getBody, got.length, tc.auth, tc.body)
			}
		})
	}
	for _, tc := range []struct {
		name string
		req  func() *http.Request
	}{
		{"NoToken", func() *http.Request { return formRequest(http.MethodPost, "channel=C1") }},
		{"HeaderAlready", func() *http.Request {
			r := formRequest(http.MethodPost, "token=xoxb-form&channel=C1")
			r.Header.Set("Authorization", "Bearer xoxb-header")
			return r
		}},
		{"JSON", func() *http.Request {
			r, _ := http.NewRequest(http.MethodPost, "https://slack.com/api/chat.postMessage", strings.NewReader(`{"token":"xoxb-json"}`))
			r.Header.Set("Content-Type", "application/json")
			return r
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := tc.req()
			want := req.Header.Get("Authorization")
			b, _ := req.GetBody()
			body, _ := io.ReadAll(b)
			if got := passOn(t, req); got.auth != want || got.body != string(body) {
				t.Errorf("passed on Authorization %q, body %q; want %q, %q", got.auth, got.body, want, body)
			}
		})
	}
}
