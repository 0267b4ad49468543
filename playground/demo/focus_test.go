package demo_test

import (
	"context"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/agents/toolbox"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/playground/demo"
)

// TestDemoAnswersFromTheFocus: through the real executor, "is this one compatible?"
// with a conversation focus gets the demo's reply naming the focused item and its
// details, without a tool call; without a focus the question is searched as before.
func TestDemoAnswersFromTheFocus(t *testing.T) {
	rec := &recordingModel{m: demo.New()}
	reg := agents.NewRegistry()
	reg.MustRegister(toolbox.Calculate())
	exec := agents.NewExecutor(agents.ExecutorConfig{Client: rec, Model: demo.ModelName, Registry: reg, Logger: quietLogger()})
	p := conversation.Prompt{Key: conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1.2"}, UserID: "U1", Text: "is this one compatible?",
		Focus: &conversation.Entity{ID: "PS-11752778", Title: "Door gasket", Type: "part", Attributes: map[string]string{"model_number": "WDT780SAEM1"}}}
	f, err := exec.Execute(context.Background(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"**Door gasket** (`PS-11752778`)", "- model_number: WDT780SAEM1", "offline demo model"} {
		if !strings.Contains(f.Answer, want) {
			t.Errorf("answer %q lacks %q", f.Answer, want)
		}
	}
	if len(f.ToolCalls) != 0 {
		t.Errorf("tool calls %+v", f.ToolCalls)
	}
	p.Focus = nil
	g, err := exec.Execute(context.Background(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(g.Answer, "Door gasket") {
		t.Errorf("without a focus the answer names it: %q", g.Answer)
	}
}
