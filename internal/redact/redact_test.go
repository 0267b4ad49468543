package redact_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/internal/redact"
)

const (
	apiKey = "sk-test-0123456789abcdef"
	token  = "xoxb-1111-2222-secretvalue"
)

func TestRedactorString(t *testing.T) {
	r := redact.New(apiKey, token, "short", "", "p@ss/w rd!x")
	for _, tt := range []struct{ in, want string }{
		{"no secret here", "no secret here"},
		{"Incorrect API key provided: " + apiKey + ".", "Incorrect API key provided: [REDACTED]."},
		{"Bearer " + token + " and " + apiKey, "Bearer [REDACTED] and [REDACTED]"},
		{"short stays: short", "short stays: short"},
		{"postgres://u:p%40ss%2Fw+rd%21x@db/x", "postgres://u:[REDACTED]@db/x"},
		{"path p@ss%2Fw%20rd%21x", "path [REDACTED]"},
		{"raw p@ss/w rd!x", "raw [REDACTED]"},
	} {
		if got := r.String(tt.in); got != tt.want {
			t.Errorf("String(%q) = %q; want %q", tt.in, got, tt.want)
		}
	}
	var none *redact.Redactor
	if got := none.String(apiKey); got != apiKey {
		t.Errorf("nil Redactor changed %q into %q", apiKey, got)
	}
}

func TestRedactorLongestFirst(t *testing.T) {
	r := redact.New("abcdefgh", "abcdefgh-and-more")
	if got := r.String("key abcdefgh-and-more!"); got != "key [REDACTED]!" {
		t.Errorf("got %q; want the longer secret masked whole", got)
	}
}

// keyValuer is a slog.LogValuer whose value holds the key.
type keyValuer struct{}

func (keyValuer) LogValue() slog.Value {
	return slog.GroupValue(slog.String("auth", "Bearer "+apiKey), slog.Int("n", 3))
}

// stringer prints the token.
type stringer struct{}

func (stringer) String() string { return "client with " + token }

type config struct {
	URL    string
	Header map[string]string
}

type nilStringer struct{ s *string }

func (n *nilStringer) String() string { return *n.s }

func TestHandlerScrubsEveryValue(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			var inner slog.Handler = slog.NewTextHandler(&buf, nil)
			if format == "json" {
				inner = slog.NewJSONHandler(&buf, nil)
			}
			log := slog.New(redact.NewHandler(inner, redact.New(apiKey, token)))
			provider := fmt.Errorf("model call: %w", errors.New("status 401: Incorrect API key provided: "+apiKey))
			log = log.With("preset", "token="+token).WithGroup("g")
			log.Error("failed with "+apiKey,
				"error", provider,
				"valuer", keyValuer{},
				"stringer", stringer{},
				slog.Group("outer", slog.Group("inner", slog.String("header", "Bearer "+token), slog.Any("err", provider))),
				"config", config{URL: "https://x", Header: map[string]string{"Authorization": apiKey}},
				"bytes", []byte("raw "+token),
				"plain", "nothing secret",
				"count", 42,
				"nil", (*nilStringer)(nil),
			)
			out := buf.String()
			for _, s := range []string{apiKey, token} {
				if strings.Contains(out, s) {
					t.Fatalf("log holds %q:\n%s", s, out)
				}
			}
			for _, want := range []string{"[REDACTED]", "nothing secret", "42", "Incorrect API key provided: [REDACTED]"} {
				if !strings.Contains(out, want) {
					t.Errorf("log lacks %q:\n%s", want, out)
				}
			}
			if format == "json" {
				var m map[string]any
				if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
					t.Fatalf("not one JSON record: %v\n%s", err, out)
				}
				g := m["g"].(map[string]any)
				inner := g["outer"].(map[string]any)["inner"].(map[string]any)
				if inner["header"] != "Bearer [REDACTED]" {
					t.Errorf("nested group header = %v", inner["header"])
				}
				if g["valuer"].(map[string]any)["n"] != float64(3) {
					t.Errorf("LogValuer's other fields were not kept: %v", g["valuer"])
				}
				if m["preset"] != "token=[REDACTED]" {
					t.Errorf("WithAttrs value = %v", m["preset"])
				}
			}
		})
	}
}

func TestHandlerWithoutSecretsIsTheInnerHandler(t *testing.T) {
	inner := slog.NewTextHandler(&bytes.Buffer{}, nil)
	if h := redact.NewHandler(inner, redact.New("short")); h != slog.Handler(inner) {
		t.Errorf("NewHandler with no secret = %T; want the inner handler", h)
	}
}

func BenchmarkHandler(b *testing.B) {
	r := redact.New(apiKey, token, "xapp-1-A0-1234567890-abcdef", "another-profile-key-123456")
	log := slog.New(redact.NewHandler(slog.NewJSONHandler(&bytes.Buffer{}, nil), r))
	err := errors.New("connection refused")
	b.ReportAllocs()
	for b.Loop() {
		log.Info("turn finished", "thread", "T1/C1/1700000000.000100", "input_id", "Ev123", "duration", 1234, "error", err)
	}
}

func BenchmarkHandlerBaseline(b *testing.B) {
	log := slog.New(slog.NewJSONHandler(&bytes.Buffer{}, nil))
	err := errors.New("connection refused")
	b.ReportAllocs()
	for b.Loop() {
		log.Info("turn finished", "thread", "T1/C1/1700000000.000100", "input_id", "Ev123", "duration", 1234, "error", err)
	}
}
