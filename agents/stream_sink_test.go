package agents_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// sink records what a conversation.TextSink is given.
type sink struct {
	mu     sync.Mutex
	text   strings.Builder
	writes int
	resets int
}

func (s *sink) Write(d string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.text.WriteString(d)
	s.writes++
}

func (s *sink) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.text.Reset()
	s.resets++
}

func TestExecutorStreamsTheAnswerToTheSink(t *testing.T) {
	srv := MustServer(t)
	exec := newExecutor(t, srv, nil)
	srv.Push(
		openaitest.Response{Text: "Let me check the time.",
			ToolCalls: []openaitest.ToolCall{{ID: "call_time", Name: "current_time", Arguments: `{"timezone":"Europe/Paris"}`}}},
		openaitest.Response{Text: "It is **13:00** in Paris."},
	)
	var s sink
	p := prompt("What time is it in Paris?")
	p.AnswerSink = &s
	f, err := exec.Execute(context.Background(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.text.String(); got != f.Answer || got != "It is **13:00** in Paris." {
		t.Fatalf("sink holds %q, answer %q", got, f.Answer)
	}
	if s.resets != 1 || s.writes < 8 {
		t.Fatalf("resets %d, writes %d: want one reset after the tool-calling text, word-sized writes", s.resets, s.writes)
	}
}

func TestCompleteResetsTheSinkOnRetry(t *testing.T) {
	srv := MustServer(t)
	c := newClient(t, srv)
	srv.Push(openaitest.Response{Status: http.StatusServiceUnavailable}, openaitest.Response{Text: "second try"})
	var s sink
	comp, err := c.Complete(agents.WithTextSink(context.Background(), &s), openai.ChatCompletionRequest{
		Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.text.String() != "second try" || comp.Content != "second try" || s.resets != 1 {
		t.Fatalf("sink %q after %d resets; content %q", s.text.String(), s.resets, comp.Content)
	}
}
