package demo_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/agents/planner"
	"github.com/threadwright/threadwright/agents/toolbox"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/playground/demo"
)

// recordingModel keeps the requests the demo model answers.
type recordingModel struct {
	m    *demo.Model
	mu   sync.Mutex
	reqs []openai.ChatCompletionRequest
}

func (r *recordingModel) Complete(ctx context.Context, req openai.ChatCompletionRequest) (agents.Completion, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return r.m.Complete(ctx, req)
}

// taskRequests returns the recorded requests of the planner task id.
func (r *recordingModel) taskRequests(id string) []openai.ChatCompletionRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []openai.ChatCompletionRequest
	for _, req := range r.reqs {
		for _, m := range req.Messages {
			if m.Role == openai.ChatMessageRoleUser && strings.Contains(m.Content, "## The task ("+id+")") {
				out = append(out, req)
				break
			}
		}
	}
	return out
}

func toolNames(req openai.ChatCompletionRequest) []string {
	var out []string
	for _, t := range req.Tools {
		out = append(out, t.Function.Name)
	}
	return out
}

// TestDemoPlannerTaskTypes: under the real planner, the demo plans a tool task per
// lookup, each offered only its own tool, and a reasoning task that puts their
// results together without tools; a greeting is one reasoning task.
func TestDemoPlannerTaskTypes(t *testing.T) {
	rec := &recordingModel{m: demo.New()}
	reg := agents.NewRegistry()
	reg.MustRegister(toolbox.CurrentTime(time.Now))
	reg.MustRegister(toolbox.Calculate())
	exec := agents.NewExecutor(agents.ExecutorConfig{Client: rec, Model: demo.ModelName, Registry: reg, Logger: quietLogger()})
	pl := planner.New(planner.Config{Client: rec, Model: demo.ModelName, Executor: exec, Logger: quietLogger()})
	key := conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1.2"}

	f, err := pl.Execute(context.Background(), conversation.Prompt{Key: key, UserID: "U1", Text: "what time is it in Paris, and what is 3 * 14?"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string][]string{"current_time": {"current_time"}, "calculate": {"calculate"}} {
		reqs := rec.taskRequests(id)
		if len(reqs) == 0 {
			t.Fatalf("no task %q was run", id)
		}
		for _, req := range reqs {
			if got := toolNames(req); !slices.Equal(got, want) {
				t.Errorf("task %q offered %v, want %v", id, got, want)
			}
		}
	}
	combine := rec.taskRequests("combine")
	if len(combine) != 1 || len(combine[0].Tools) != 0 {
		t.Fatalf("the reasoning task: %d requests, tools %v; want one request without tools", len(combine), combine)
	}
	if !strings.Contains(f.Answer, "**42**") || !strings.Contains(f.Answer, "Europe/Paris") {
		t.Errorf("answer %q, want both results", f.Answer)
	}
	if i := strings.Index(f.Answer, "offline demo model"); i < strings.Index(f.Answer, "**42**") {
		t.Errorf("the demo's note is not at the end of the answer: %q", f.Answer)
	}

	g, err := pl.Execute(context.Background(), conversation.Prompt{Key: key, UserID: "U1", Text: "hi there!"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	reply := rec.taskRequests("reply")
	if len(reply) != 1 || len(reply[0].Tools) != 0 || len(g.ToolCalls) != 0 {
		t.Fatalf("a greeting: %d requests of its reasoning task, %d tool calls", len(reply), len(g.ToolCalls))
	}
	if !strings.Contains(g.Answer, "offline demo model") {
		t.Errorf("greeting answer %q", g.Answer)
	}
}
