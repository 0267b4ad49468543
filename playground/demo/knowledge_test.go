package demo_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/agents/toolbox"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/playground/demo"
	"github.com/threadwright/threadwright/store/sqlite"
)

// TestKnowledgeAnswer: with search_knowledge offered, the demo model searches the
// knowledge base (a real SQLite one) for a question, answers from the passage found
// and cites it, so the reply ends with the document and heading; a greeting, the
// time and a question the knowledge base has nothing on are answered as before.
func TestKnowledgeAnswer(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "threadwright.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.ReplaceSource(ctx, "handbook/leave.md", "h1", conversation.Origin{}, []conversation.Chunk{
		{Heading: "Parental leave", Text: "Employees get 16 weeks of paid parental leave. It can be split in two."},
	}); err != nil {
		t.Fatal(err)
	}
	reg := agents.NewRegistry()
	reg.MustRegister(toolbox.CurrentTime(nil))
	reg.MustRegister(toolbox.KnowledgeTool(st, 5))
	exec := agents.NewExecutor(agents.ExecutorConfig{Client: demo.New(), Model: demo.ModelName, Registry: reg, Logger: quietLogger()})
	ask := func(q string) (conversation.Findings, string) {
		t.Helper()
		f, err := exec.Execute(ctx, conversation.Prompt{UserID: "U1", Text: q}, nil)
		if err != nil {
			t.Fatal(err)
		}
		reply, err := agents.NewSynthesizer().Synthesize(ctx, conversation.Prompt{}, f)
		if err != nil {
			t.Fatal(err)
		}
		return f, reply
	}

	f, reply := ask("How long is parental leave?")
	if len(f.ToolCalls) != 1 || f.ToolCalls[0].Name != "search_knowledge" || f.ToolCalls[0].Arguments != `{"query":"parental leave"}` {
		t.Fatalf("tool calls %+v; want one search_knowledge for the key words", f.ToolCalls)
	}
	if !strings.HasPrefix(reply, "From the knowledge base: Employees get 16 weeks of paid parental leave. It can be split in two. [1]") ||
		!strings.HasSuffix(reply, "*Sources*\n[1] handbook/leave.md — Parental leave") {
		t.Fatalf("reply:\n%s\nwant the passage cited and its source at the end", reply)
	}

	f, reply = ask("Where is the office wifi password?")
	if len(f.ToolCalls) != 1 || !strings.Contains(reply, "The knowledge base has nothing on this") || strings.Contains(reply, "*Sources*") {
		t.Fatalf("nothing found: calls %+v, reply:\n%s", f.ToolCalls, reply)
	}
	for _, q := range []string{"hello", "thanks!", "what time is it?", "help"} {
		f, _ := ask(q)
		for _, c := range f.ToolCalls {
			if c.Name == "search_knowledge" {
				t.Errorf("%q searched the knowledge base", q)
			}
		}
	}
}
