package redact

import (
	"strings"
	"testing"
)

// TestURL: user information and query values are masked, the rest is kept so that the
// log still says where; an unparsable URL is masked whole.
func TestURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://otel-collector:4318":                                  "http://otel-collector:4318",
		"https://user:hunter2-secret@collector.example.com/v1/traces": "https://[REDACTED]@collector.example.com/v1/traces",
		"https://glc_tokenvalue@otlp.example.com":                     "https://[REDACTED]@otlp.example.com",
		"https://otlp.example.com/v1/traces?api-key=abc123&region=eu": "https://otlp.example.com/v1/traces?api-key=[REDACTED]&region=[REDACTED]",
		"http://host/%zz": Mask,
	} {
		got := URL(in)
		if got != want {
			t.Errorf("URL(%q) = %q; want %q", in, got, want)
		}
		for _, secret := range []string{"hunter2", "glc_tokenvalue", "abc123"} {
			if strings.Contains(got, secret) {
				t.Errorf("URL(%q) keeps %q", in, secret)
			}
		}
	}
}
