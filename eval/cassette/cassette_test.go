package cassette_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/eval/cassette"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// request is a chat completion request of the executor's shape: a system prompt that
// says what day it is, a question, and a tool.
func request(system, question string) openai.ChatCompletionRequest {
	return openai.ChatCompletionRequest{
		Model: "gpt-test",
		Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: system},
			{Role: openai.ChatMessageRoleUser, Content: question},
		},
		Tools: []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: "calculate", Description: "Exact arithmetic.", Parameters: json.RawMessage(`{"type":"object","properties":{"expression":{"type":"string"}}}`)}}},
	}
}

// sink is a conversation.TextSink that keeps what is written to it.
type sink struct{ text strings.Builder }

func (s *sink) Reset()             { s.text.Reset() }
func (s *sink) Write(delta string) { s.text.WriteString(delta) }

// TestRecordReplayByteForByte: calls recorded from the fake server through the real
// client (scripted answers and OpenAI's recorded streams) replay, from the saved
// file, as the very completions the client returned, field for field and byte for
// byte once encoded, in whatever order they are asked; the replay writes the
// content to the text sink as the client streamed it; and nothing is called.
func TestRecordReplayByteForByte(t *testing.T) {
	srv := openaitest.NewServer()
	defer srv.Close()
	stream := func(name string) openaitest.Response {
		b, err := os.ReadFile(filepath.Join("..", "..", "agents", "testdata", "openai", name))
		if err != nil {
			t.Fatal(err)
		}
		return openaitest.Response{RawSSE: b}
	}
	srv.Push(
		openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: "calculate", Arguments: `{"expression": "17 * 23"}`}}, Usage: openaitest.Usage{PromptTokens: 120, CompletionTokens: 9}},
		openaitest.Response{Text: "17 × 23 = **391**.", Usage: openaitest.Usage{PromptTokens: 150, CompletionTokens: 7}},
		stream("stream_text.sse"),
		stream("stream_parallel_tool_calls.sse"),
		stream("stream_finish_length.sse"),
	)
	client := agents.NewClient(agents.ClientConfig{BaseURL: srv.URL(), APIKey: "sk-test", MaxRetries: -1})
	rec := cassette.NewRecorder("gpt-test", "gpt-small")
	model := rec.Model("arithmetic", 1, client)
	reqs := []openai.ChatCompletionRequest{
		request("Today is Monday, 2 March 2026 (UTC).", "what is 17 * 23?"),
		request("Today is Monday, 2 March 2026 (UTC).", "and then?"),
		request("You answer briefly.", "say hello"),
		request("You answer briefly.", "weather in two cities"),
		request("You answer briefly.", "write a long story"),
	}
	var got []string
	ctx := context.Background()
	for _, req := range reqs {
		comp, err := model.Complete(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, encode(t, comp))
	}
	path := filepath.Join(t.TempDir(), "cassette.json")
	if err := rec.Save(path); err != nil {
		t.Fatal(err)
	}
	served := len(srv.Requests())
	c, err := cassette.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Model != "gpt-test" || c.SmallModel != "gpt-small" || len(c.Interactions) != len(reqs) || c.Recorded.IsZero() {
		t.Fatalf("cassette %+v", c)
	}
	p := cassette.NewPlayer(c)
	replay := p.Model("arithmetic", 1)
	for _, i := range []int{4, 2, 0, 3, 1} { // another order: matched on the request
		// The next day: the date in the system prompt is not the prompt's change.
		req := reqs[i]
		req.Messages = append([]openai.ChatCompletionMessage(nil), req.Messages...)
		req.Messages[0].Content = strings.Replace(req.Messages[0].Content, "Monday, 2 March", "Tuesday, 3 March", 1)
		var s sink
		comp, err := replay.Complete(agents.WithTextSink(ctx, &s), req)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if enc := encode(t, comp); enc != got[i] {
			t.Errorf("request %d replayed as\n%s\nrecorded\n%s", i, enc, got[i])
		}
		if s.text.String() != comp.Content {
			t.Errorf("request %d: the sink got %q; want the content %q", i, s.text.String(), comp.Content)
		}
	}
	if n := len(srv.Requests()); n != served {
		t.Errorf("the replay called the server %d times", n-served)
	}
	// A second run of the case replays the first one's recording.
	if _, err := p.Model("arithmetic", 2).Complete(ctx, reqs[2]); err != nil {
		t.Errorf("run 2: %v", err)
	}
}

// encode is c as JSON.
func encode(t *testing.T, c agents.Completion) string {
	t.Helper()
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fixed answers every call with the same completion, or error.
type fixed struct {
	comp agents.Completion
	err  error
}

func (f fixed) Complete(context.Context, openai.ChatCompletionRequest) (agents.Completion, error) {
	return f.comp, f.err
}

// TestDrift: a request that differs from every recorded one, beyond what is masked,
// fails with ErrDrift naming the nearest recorded request and the message where they
// differ; a case that was never recorded says so; a recorded failure replays as a
// failure.
func TestDrift(t *testing.T) {
	rec := cassette.NewRecorder("gpt-test", "")
	ctx := context.Background()
	ok := rec.Model("instructed", 1, fixed{comp: agents.Completion{Content: "391", Model: "gpt-test"}})
	if _, err := ok.Complete(ctx, request("Answer in one sentence. Today is Monday, 2 March 2026 (UTC).", "what is 17 * 23?")); err != nil {
		t.Fatal(err)
	}
	failing := rec.Model("failing", 1, fixed{err: errors.New("the model is down")})
	if _, err := failing.Complete(ctx, request("x", "y")); err == nil {
		t.Fatal("the failing call did not fail")
	}
	path := filepath.Join(t.TempDir(), "c.json")
	if err := rec.Save(path); err != nil {
		t.Fatal(err)
	}
	c, err := cassette.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	p := cassette.NewPlayer(c)

	_, err = p.Model("instructed", 1).Complete(ctx, request("Answer in French. Today is Monday, 2 March 2026 (UTC).", "what is 17 * 23?"))
	if !errors.Is(err, cassette.ErrDrift) || !strings.Contains(err.Error(), "messages[0] (system)") ||
		!strings.Contains(err.Error(), "recorded …") || !strings.Contains(err.Error(), "French") || !strings.Contains(err.Error(), "one sentence") {
		t.Errorf("changed instructions: %v", err)
	}
	req := request("Answer in one sentence. Today is Monday, 2 March 2026 (UTC).", "what is 17 * 23?")
	req.Model = "gpt-other"
	if _, err := p.Model("instructed", 1).Complete(ctx, req); !errors.Is(err, cassette.ErrDrift) || !strings.Contains(err.Error(), "no request of that model") {
		t.Errorf("another model: %v", err)
	}
	if _, err := p.Model("never-recorded", 1).Complete(ctx, req); !errors.Is(err, cassette.ErrDrift) || !strings.Contains(err.Error(), "not in the cassette") {
		t.Errorf("a case not recorded: %v", err)
	}
	if _, err := p.Model("failing", 1).Complete(ctx, request("x", "y")); err == nil || errors.Is(err, cassette.ErrDrift) || !strings.Contains(err.Error(), "the model is down") {
		t.Errorf("a recorded failure: %v", err)
	}
}

// TestNormalize: what changes from run to run without the prompt changing is masked;
// the rest is kept.
func TestNormalize(t *testing.T) {
	a := `{"model":"m","messages":[{"role":"system","content":"Today is Monday, 2 March 2026 (UTC). Thread 1700000000.000100, ref r1a2b3c4d, at 2026-03-02T10:00:00Z, 10:00 CET.\n\n## Task\nWrite.\n\n## Other approved artifacts (excerpts, for consistency)\n- Brief (` + "`brief`" + `): text\n\n## Recent\nhi"}]}`
	b := `{"messages":[{"content":"Today is Friday, 13 November 2026 (UTC). Thread 1800000000.000200, ref rffffffff, at 2026-11-13T23:59:59+09:00, 23:59 CET.\n\n## Task\nWrite.\n\n## Recent\nhi","role":"system"}],"model":"m"}`
	na, err := cassette.Normalize([]byte(a))
	if err != nil {
		t.Fatal(err)
	}
	nb, err := cassette.Normalize([]byte(b))
	if err != nil {
		t.Fatal(err)
	}
	if na != nb {
		t.Errorf("normalized differently:\n%s\n%s", na, nb)
	}
	nc, _ := cassette.Normalize([]byte(strings.Replace(a, "Write.", "Write shorter.", 1)))
	if nc == na {
		t.Error("a change of the task was masked")
	}
	if _, err := cassette.Normalize([]byte("not json")); err == nil {
		t.Error("not JSON normalized")
	}
}

// TestOpenRefuses: a file that is not a cassette, or of another version, is refused
// with a message that says so.
func TestOpenRefuses(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"not-json":  "hello",
		"version":   `{"version": 9, "interactions": []}`,
		"unknown":   `{"version": 1, "tapes": []}`,
		"no-answer": `{"version": 1, "interactions": [{"case": "a", "run": 1, "seq": 1, "request": {}}]}`,
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := cassette.Open(p); err == nil || !strings.HasPrefix(err.Error(), "cassette: ") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := cassette.Open(filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing file opened")
	}
}
