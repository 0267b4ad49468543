package demo_test

import (
	"context"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/playground/demo"
	"github.com/threadwright/threadwright/prompts"
)

// TestGroundingRule: the demo model follows the executor's grounding rule
// (prompts.GroundingRule): under the default system prompt a factual question calls
// search_knowledge, else web_search; when the deployment's own "## Tool rules"
// replace the built-in ones, it answers without a tool.
func TestGroundingRule(t *testing.T) {
	fn := func(name string) openai.Tool {
		return openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: name,
			Parameters: map[string]any{"type": "object", "properties": map[string]any{"query": map[string]any{"type": "string"}}}}}
	}
	ask := func(t *testing.T, own bool, tools ...string) []string {
		t.Helper()
		data := prompts.ExecutorSystemData{Date: "Tuesday, 14 May 2024 (UTC)", Categories: []prompts.ToolCategory{{Name: "search"}}}
		var offered []openai.Tool
		for _, name := range tools {
			data.Categories[0].Tools = append(data.Categories[0].Tools, prompts.Tool{Name: name, Description: "Search."})
			offered = append(offered, fn(name))
		}
		if own {
			data.Instructions = "## Tool rules\n- Answer general questions from what you know."
			data.OwnToolRules = prompts.HasToolRules(data.Instructions)
		}
		system, err := prompts.MustParse().Render(prompts.ExecutorSystem, data)
		if err != nil {
			t.Fatal(err)
		}
		c, err := demo.New().Complete(context.Background(), openai.ChatCompletionRequest{Tools: offered, Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: system},
			{Role: openai.ChatMessageRoleUser, Content: "What is the boiling point of water at sea level?"},
		}})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tc := range c.ToolCalls {
			names = append(names, tc.Function.Name)
		}
		return names
	}
	for _, tc := range []struct {
		name  string
		own   bool
		tools []string
		want  string
	}{
		{"Knowledge", false, []string{"search_knowledge", "web_search"}, "search_knowledge"},
		{"Web", false, []string{"web_search"}, "web_search"},
		{"OwnRules", true, []string{"search_knowledge", "web_search"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ask(t, tc.own, tc.tools...)
			if tc.want == "" && len(got) > 0 || tc.want != "" && (len(got) != 1 || got[0] != tc.want) {
				t.Fatalf("calls %v, want %q", got, tc.want)
			}
		})
	}
}
