package mcp

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/threadwright/threadwright/agents"
)

func TestBackoff(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-server")
	sc := ServerConfig{Name: "files", Command: []string{missing}, Timeout: time.Second, ConnectTimeout: time.Second, Prefix: "files"}
	s := newServer(sc, Config{RetryDelay: time.Second, MaxRetryDelay: 4 * time.Second}, slog.New(slog.DiscardHandler))
	now := time.Unix(1_000_000, 0)
	s.now = func() time.Time { return now }

	state := func() (int, time.Duration) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.failures, s.retryAt.Sub(now)
	}
	for i, step := range []struct {
		advance  time.Duration
		failures int
		wait     time.Duration
		msg      string
	}{
		{0, 1, time.Second, "connect: "},                                             // first attempt fails
		{500 * time.Millisecond, 1, 500 * time.Millisecond, "next attempt in 500ms"}, // backing off: no attempt
		{500 * time.Millisecond, 2, 2 * time.Second, "connect: "},
		{2 * time.Second, 3, 4 * time.Second, "connect: "},
		{4 * time.Second, 4, 4 * time.Second, "connect: "}, // capped at MaxRetryDelay
	} {
		now = now.Add(step.advance)
		_, err := s.call(context.Background(), "echo", nil)
		if !errors.Is(err, ErrUnavailable) || !strings.HasPrefix(err.Error(), "MCP server files is not available: ") ||
			!strings.Contains(err.Error(), step.msg) {
			t.Errorf("step %d: err = %v, want ErrUnavailable with %q", i, err, step.msg)
		}
		if f, w := state(); f != step.failures || w != step.wait {
			t.Errorf("step %d: %d failures, next attempt in %s; want %d, %s", i, f, w, step.failures, step.wait)
		}
	}
}

var toolNameRe = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestToolName(t *testing.T) {
	used := map[string]bool{}
	for _, tt := range []struct{ prefix, tool, want string }{
		{"files", "read", "files__read"},
		{"files", "read.file", "files__read_file"},
		{"files", "read_file", "files__read_file_"}, // clashes with the one before: a hash suffix
		{"files", "héllo wörld", "files__h_llo_w_rld"},
		{"files", strings.Repeat("x", 60), "files__" + strings.Repeat("x", 48) + "_"},
	} {
		got := toolName(tt.prefix, tt.tool, used)
		used[got] = true
		if !toolNameRe.MatchString(got) {
			t.Errorf("toolName(%q, %q) = %q, not a valid OpenAI function name", tt.prefix, tt.tool, got)
		}
		if !strings.HasPrefix(got, tt.want) {
			t.Errorf("toolName(%q, %q) = %q, want %q…", tt.prefix, tt.tool, got, tt.want)
		}
	}
}

func TestInputSchema(t *testing.T) {
	for _, tt := range []struct {
		name   string
		schema any
		want   string // "" for an error
	}{
		{"Nil", nil, `{"properties":{},"type":"object"}`},
		{"NoType", map[string]any{"properties": map[string]any{"q": map[string]any{"type": "string"}}},
			`{"properties":{"q":{"type":"string"}},"type":"object"}`},
		{"NoProperties", map[string]any{"type": "object"}, `{"properties":{},"type":"object"}`},
		{"NotObject", map[string]any{"type": "string"}, ""},
		{"NotMap", []any{1}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := inputSchema(tt.schema, true)
			if tt.want == "" {
				if err == nil {
					t.Errorf("inputSchema = %s, want an error", got)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Errorf("inputSchema = %s, %v; want %s", got, err, tt.want)
			}
		})
	}
}

func TestResultText(t *testing.T) {
	res := &sdk.CallToolResult{Content: []sdk.Content{
		&sdk.AudioContent{MIMEType: "audio/wav", Data: make([]byte, 10)},
		&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///a.bin", MIMEType: "application/octet-stream", Blob: []byte{1}}},
		&sdk.ResourceLink{Name: "doc", URI: "https://x/doc", Description: "the doc"},
	}}
	want := "[audio audio/wav, 10 bytes, not shown]\n[resource file:///a.bin, application/octet-stream, 1 bytes, not shown]\n[resource doc: https://x/doc (the doc)]"
	if got := resultText(res); got != want {
		t.Errorf("resultText =\n%s\nwant\n%s", got, want)
	}
	if got := resultText(&sdk.CallToolResult{}); got != "(the tool returned nothing)" {
		t.Errorf("resultText(empty) = %q", got)
	}
}

// TestInputSchemaUntrusted: an untrusted server's schema has each description cut
// to agents.MaxUntrustedDescription runes, at any depth; a trusted one's is kept.
func TestInputSchemaUntrusted(t *testing.T) {
	long := strings.Repeat("é", 2*agents.MaxUntrustedDescription)
	schema := map[string]any{"description": long, "properties": map[string]any{
		"q": map[string]any{"type": "string", "description": long},
		"l": map[string]any{"type": "array", "items": []any{map[string]any{"description": long}}},
	}}
	got, err := inputSchema(schema, false)
	if err != nil {
		t.Fatal(err)
	}
	cut := strings.Repeat("é", agents.MaxUntrustedDescription-1) + "…"
	if strings.Contains(string(got), long[:2*agents.MaxUntrustedDescription+2]) || strings.Count(string(got), cut) != 3 {
		t.Errorf("untrusted schema = %s; want its 3 descriptions cut", got)
	}
	kept, _ := inputSchema(schema, true)
	if strings.Count(string(kept), long) != 3 {
		t.Errorf("trusted schema lost its descriptions: %s", kept)
	}
}
