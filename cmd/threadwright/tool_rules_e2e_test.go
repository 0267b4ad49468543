package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/playground/demo"
	"github.com/threadwright/threadwright/playground/emulator"
	"github.com/threadwright/threadwright/prompts"
)

// TestE2EExecutorToolRules: the executor's two firm tool rules (docs/tools.md,
// "Executor instructions") through the real program, with the demo model behind the
// fake OpenAI server and a knowledge base ingested by the CLI.
//   - Default: the system prompt carries both rules, and a factual question gets a
//     search_knowledge call whose result grounds the answer.
//   - A channel whose EXECUTOR_INSTRUCTIONS has its own "## Tool rules" section gets
//     that section instead of the built-in rules, and the same question is answered
//     without a tool call.
func TestE2EExecutorToolRules(t *testing.T) {
	relaxed := filepath.Join(t.TempDir(), "relaxed.md")
	if err := os.WriteFile(relaxed, []byte("## Tool rules\n- RELAXED-RULES: answer general questions from what you know; use tools only for live data such as the time.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, emulator.Config{})
	h.ingest("physics", "water.md", "# Water\n\n## Boiling point\n\nWater boils at 100 degrees Celsius at sea level.\n")
	h.env["EXECUTOR_INSTRUCTIONS_CHANNELS"] = "C0RANDOM:" + relaxed
	h.ai.Handle(demoHandler(demo.New()))
	h.start()

	// ask posts a factual question in channel and returns the answer, the system
	// prompt of its turn and the tools the turn called.
	ask := func(channel string) (answer, system string, called []string) {
		before := len(h.ai.Requests())
		ts := h.post(channel, alice, "<@U0BOT> what is the boiling point of water at sea level?", "")
		answer = h.lastBotText(channel, ts)
		reqs := h.ai.Requests()[before:]
		if len(reqs) == 0 {
			t.Fatal("no model request")
		}
		for _, m := range reqs[len(reqs)-1].Chat.Messages {
			for _, tc := range m.ToolCalls {
				called = append(called, tc.Function.Name)
			}
		}
		return answer, reqs[0].SystemPrompt(), called
	}

	t.Run("Default", func(t *testing.T) {
		answer, system, called := ask(general)
		for _, rule := range []string{prompts.GroundingRule, prompts.NoRepeatRule} {
			if !strings.Contains(system, "- "+rule+":") {
				t.Errorf("default system prompt lacks %q:\n%s", rule, system)
			}
		}
		if !slices.Equal(called, []string{"search_knowledge"}) || !strings.Contains(answer, "Water boils at 100 degrees Celsius") {
			t.Fatalf("tools called %v, answer:\n%s", called, answer)
		}
	})
	t.Run("ChannelRelaxes", func(t *testing.T) {
		answer, system, called := ask("C0RANDOM")
		if !strings.Contains(system, "## Tool rules\n- RELAXED-RULES") || strings.Contains(system, prompts.GroundingRule) || strings.Contains(system, prompts.NoRepeatRule) {
			t.Fatalf("system prompt in #random:\n%s", system)
		}
		if len(called) > 0 || strings.Contains(answer, "100 degrees") {
			t.Fatalf("relaxed channel: tools called %v, answer:\n%s", called, answer)
		}
	})
}
