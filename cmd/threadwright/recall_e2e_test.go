package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/playground/emulator"
	"github.com/threadwright/threadwright/store/storetest"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// Executor instructions and the recall tool end to end (docs/tools.md, "Executor
// instructions", "Recall"): the real program, the emulator and the fake model.

func TestE2EExecutorInstructions(t *testing.T) {
	dir := t.TempDir()
	global := filepath.Join(dir, "patterns.md")
	random := filepath.Join(dir, "random.md")
	if err := os.WriteFile(global, []byte("## Workflow patterns\nPATTERN-GLOBAL: order questions use lookup, then calculate.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(random, []byte("PATTERN-RANDOM: time questions use current_time.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newAssistantViewHarness(t)
	h.env["EXECUTOR_INSTRUCTIONS"] = global
	h.env["EXECUTOR_INSTRUCTIONS_CHANNELS"] = "C0RANDOM:" + random
	h.start()

	system := func() string {
		reqs := h.ai.Requests()
		return reqs[len(reqs)-1].SystemPrompt()
	}
	t.Run("Global", func(t *testing.T) {
		h.ai.Push(openaitest.Response{Text: "Paris."})
		ts := h.post(general, alice, "<@U0BOT> what is the capital of France?", "")
		h.replies(general, ts, 1)
		if s := system(); !strings.Contains(s, "## Instructions for this deployment\n## Workflow patterns\nPATTERN-GLOBAL") || strings.Contains(s, "PATTERN-RANDOM") {
			t.Fatalf("system prompt in #general:\n%s", s)
		}
	})
	t.Run("Channel", func(t *testing.T) {
		h.ai.Push(openaitest.Response{Text: "Noon."})
		ts := h.post("C0RANDOM", alice, "<@U0BOT> what time is it?", "")
		h.replies("C0RANDOM", ts, 1)
		if s := system(); !strings.Contains(s, "PATTERN-RANDOM") || strings.Contains(s, "PATTERN-GLOBAL") {
			t.Fatalf("system prompt in #random:\n%s", s)
		}
	})
	t.Run("AssistantViewChannel", func(t *testing.T) {
		// In the assistant view the viewed channel's instructions apply, as its
		// tool policy does.
		im, thread, err := h.emu.StartAssistantThread(alice, "C0RANDOM")
		if err != nil {
			t.Fatal(err)
		}
		h.replies(im, thread, 1) // the greeting
		h.ai.Push(openaitest.Response{Text: "Noon."})
		h.post(im, alice, "What time is it?", thread)
		h.replies(im, thread, 2)
		if s := system(); !strings.Contains(s, "PATTERN-RANDOM") || strings.Contains(s, "PATTERN-GLOBAL") {
			t.Fatalf("system prompt viewing #random:\n%s", s)
		}
	})
}

func TestE2EExecutorInstructionsTooLarge(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big.md")
	if err := os.WriteFile(big, []byte(strings.Repeat("x", agents.MaxInstructionsBytes+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, env := range map[string]map[string]string{
		"Global":     {"EXECUTOR_INSTRUCTIONS": big},
		"Channel":    {"EXECUTOR_INSTRUCTIONS_CHANNELS": "C0RANDOM:" + big},
		"Unreadable": {"EXECUTOR_INSTRUCTIONS": filepath.Join(t.TempDir(), "missing.md")},
	} {
		t.Run(name, func(t *testing.T) {
			env["DATA_DIR"] = t.TempDir()
			setEnv(t, env)
			m := NewMain()
			if err := LoadConfig(&m.Config); err != nil {
				t.Fatal(err)
			}
			m.noMetrics = true
			m.Logger = slog.New(slog.NewTextHandler(testWriter{t}, nil))
			err := m.Run(context.Background())
			if err == nil || !strings.HasPrefix(err.Error(), "EXECUTOR_INSTRUCTIONS: ") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("Run = %v, want one line starting EXECUTOR_INSTRUCTIONS", err)
			}
		})
	}
	t.Run("MalformedChannels", func(t *testing.T) {
		setEnv(t, map[string]string{"EXECUTOR_INSTRUCTIONS_CHANNELS": "C0RANDOM"})
		var c Config
		if err := LoadConfig(&c); err == nil || !strings.HasPrefix(err.Error(), "EXECUTOR_INSTRUCTIONS_CHANNELS: expected channel:path pairs") {
			t.Fatalf("LoadConfig = %v", err)
		}
	})
}

// recallRef matches a listed earlier tool result of the "orders" tool.
var recallRef = regexp.MustCompile(`(?m)^- (r[0-9a-f]{8}): orders \{"id":"42"\}$`)

// recallHarness runs the program with an "orders" tool that counts its runs and a
// model that looks order 42 up, and on the follow-up recalls the result when the
// system prompt lists it (and calls orders again when it does not). Asked to "reuse"
// a reference, it recalls that reference.
type recallHarness struct {
	*harness
	orders atomic.Int32
}

func newRecallHarness(t *testing.T, databaseURL string) *recallHarness {
	r := &recallHarness{harness: newHarness(t, emulator.Config{})}
	r.env["DATABASE_URL"] = databaseURL
	r.tools = func(reg *agents.Registry) error {
		return reg.Register(agents.ToolSpec{Name: "orders", Description: "Look an order up by id.", Category: "Shop", ReadOnly: true,
			Parameters: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}}}`)},
			agents.ToolFunc(func(context.Context, json.RawMessage) (string, error) {
				r.orders.Add(1)
				return "order 42: 3 blue widgets, shipped on 2 May", nil
			}))
	}
	r.ai.Handle(func(req openaitest.Request) openaitest.Response {
		ask, res := req.LastUserMessage(), req.ToolResults()
		ref := recallRef.FindStringSubmatch(req.SystemPrompt())
		switch {
		case len(res) > 0 && strings.Contains(res[len(res)-1].Content, "error:"):
			return openaitest.Response{Text: "I could not recall that."}
		case len(res) > 0 && strings.Contains(res[len(res)-1].Content, "3 blue widgets"):
			return openaitest.Response{Text: "Order 42 has 3 blue widgets."}
		case strings.HasPrefix(ask, "reuse "):
			return openaitest.Response{ToolCalls: []openaitest.ToolCall{{ID: "call_r", Name: "recall", Arguments: fmt.Sprintf(`{"ref":%q}`, strings.TrimPrefix(ask, "reuse "))}}}
		case ref != nil:
			return openaitest.Response{ToolCalls: []openaitest.ToolCall{{ID: "call_r", Name: "recall", Arguments: fmt.Sprintf(`{"ref":%q}`, ref[1])}}}
		}
		return openaitest.Response{ToolCalls: []openaitest.ToolCall{{ID: "call_o", Name: "orders", Arguments: `{"id":"42"}`}}}
	})
	return r
}

// answered waits until the bot has posted text n times in thread of #general (a
// progress message comes first while tools run).
func (r *recallHarness) answered(thread, text string, n int) {
	r.t.Helper()
	r.waitFor(fmt.Sprintf("answer %d: %q", n, text), func() bool {
		got := 0
		for _, m := range r.emu.BotMessages(general, thread) {
			if m.Text == text {
				got++
			}
		}
		return got >= n
	})
}

func TestE2ERecall(t *testing.T) {
	t.Run("SQLite", func(t *testing.T) { testRecall(t, "") })
	t.Run("Postgres", func(t *testing.T) { testRecall(t, storetest.PostgresDSN(t)) })
}

func testRecall(t *testing.T, databaseURL string) {
	r := newRecallHarness(t, databaseURL)
	r.start()
	ts := r.post(general, alice, "<@U0BOT> what is in order 42?", "")
	r.answered(ts, "Order 42 has 3 blue widgets.", 1)
	if n := r.orders.Load(); n != 1 {
		t.Fatalf("orders ran %d times on the first turn", n)
	}
	first := r.ai.Requests()[0].SystemPrompt()
	if strings.Contains(first, "## Earlier tool results") {
		t.Fatalf("a new thread lists earlier results:\n%s", first)
	}
	r.idle()
	r.stop()

	// A new process on the same store: the follow-up's prompt lists the stored call,
	// the model recalls it, and orders does not run again.
	r.start()
	r.post(general, alice, "how many widgets were in it?", ts)
	r.answered(ts, "Order 42 has 3 blue widgets.", 2)
	if n := r.orders.Load(); n != 1 {
		t.Fatalf("orders ran %d times; the follow-up should have recalled its result", n)
	}
	reqs := r.ai.Requests()
	var ref string
	var recalled string
	for _, req := range reqs {
		if m := recallRef.FindStringSubmatch(req.SystemPrompt()); m != nil && req.LastUserMessage() == "how many widgets were in it?" {
			ref = m[1]
			if res := req.ToolResults(); len(res) == 1 {
				recalled = res[0].Content
			}
		}
	}
	if ref == "" {
		t.Fatal("the follow-up's system prompt does not list the earlier orders call")
	}
	if !strings.HasPrefix(recalled, `<tool_output name="recall" trust="untrusted">`) || !strings.Contains(recalled, "order 42: 3 blue widgets") {
		t.Fatalf("recalled result %q", recalled)
	}

	// Another thread cannot recall the first thread's result.
	other := r.post(general, alice, "<@U0BOT> reuse "+ref, "")
	r.answered(other, "I could not recall that.", 1)
	reqs = r.ai.Requests()
	last := reqs[len(reqs)-1]
	if res := last.ToolResults(); len(res) != 1 || !strings.Contains(res[0].Content, fmt.Sprintf("error: unknown reference %q", ref)) || strings.Contains(res[0].Content, "widgets") {
		t.Fatalf("recall from another thread: %+v", res)
	}
	if n := r.orders.Load(); n != 1 {
		t.Fatalf("orders ran %d times", n)
	}
}
