package metrics

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestIsJSON(t *testing.T) {
	for ct, want := range map[string]bool{
		"application/json":                 true,
		"application/json; charset=utf-8":  true,
		" Application/JSON ;charset=UTF-8": true,
		"text/html; charset=utf-8":         false,
		"application/jsonx":                false,
		"":                                 false,
	} {
		if got := isJSON(ct); got != want {
			t.Errorf("isJSON(%q) = %v, want %v", ct, got, want)
		}
	}
}

// TestSlackNotOK: the verdict from the start of an answer, and the answer read whole
// after it, short or long.
func TestSlackNotOK(t *testing.T) {
	long := `{"ok":true,"text":"` + strings.Repeat("x", 3*okPeek) + `"}`
	for body, want := range map[string]bool{
		`{"ok":false}`: true,
		"{\n  \"ok\" :\tfalse, \"error\": \"x\"}": true,
		`{"ok":true}`: false,
		long:          false,
		``:            false,
	} {
		resp := &http.Response{Body: io.NopCloser(strings.NewReader(body))}
		if got := slackNotOK(resp); got != want {
			t.Errorf("slackNotOK(%.20q) = %v, want %v", body, got, want)
		}
		if b, err := io.ReadAll(resp.Body); err != nil || string(b) != body {
			t.Errorf("read %q, %v after the check; want %q", b, err, body)
		}
	}
}
