package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/threadwright/threadwright/playground/emulator"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// The assistant view end to end (docs/tools.md, "Assistant view"): the real program, the
// emulator's assistant threads and the fake model.

// newAssistantViewHarness runs the program with SUGGESTED_PROMPTS (a greeting, default
// prompts, #random's own) and a TOOL_POLICY that lets #random use current_time only.
func newAssistantViewHarness(t *testing.T) *harness {
	t.Helper()
	dir := t.TempDir()
	prompts := filepath.Join(dir, "prompts.yaml")
	if err := os.WriteFile(prompts, []byte(`title: Try asking
greeting: Hello from the assistant view!
default:
  - title: Capital
    message: What is the capital of France?
  - title: Sum
    message: What is 2+2?
channels:
  C0RANDOM:
    - title: Time
      message: What time is it?
`), 0o644); err != nil {
		t.Fatal(err)
	}
	policy := filepath.Join(dir, "tools.yaml")
	if err := os.WriteFile(policy, []byte("default: [\"*\"]\nchannels:\n  C0RANDOM: [current_time]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, emulator.Config{})
	h.env["SUGGESTED_PROMPTS"] = prompts
	h.env["TOOL_POLICY"] = policy
	h.env["AGENT_SURFACE"] = "assistant"
	return h
}

// waitThread waits until the emulator's assistant thread satisfies cond.
func waitThread(h *harness, channel, ts, what string, cond func(emulator.AssistantThread) bool) emulator.AssistantThread {
	h.t.Helper()
	var got emulator.AssistantThread
	h.waitFor(what, func() bool {
		var ok bool
		got, ok = h.emu.AssistantThread(channel, ts)
		return ok && cond(got)
	})
	return got
}

func promptMessages(ps []emulator.SuggestedPrompt) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Message)
	}
	return out
}

func TestE2EAssistantView(t *testing.T) {
	h := newAssistantViewHarness(t)
	h.start()

	// The person opens the assistant view while in #general.
	im, thread, err := h.emu.StartAssistantThread(alice, general)
	if err != nil {
		t.Fatal(err)
	}
	greeting := h.replies(im, thread, 1)[0]
	if greeting.Text != "Hello from the assistant view!" || greeting.ThreadTS != thread {
		t.Fatalf("greeting %q in thread %q", greeting.Text, greeting.ThreadTS)
	}
	at := waitThread(h, im, thread, "the suggested prompts", func(a emulator.AssistantThread) bool { return len(a.Prompts) > 0 })
	msgs := promptMessages(at.Prompts)
	if at.PromptsTitle != "Try asking" || len(msgs) != 4 || msgs[0] != "What is the capital of France?" || msgs[1] != "What is 2+2?" {
		t.Fatalf("prompts %q %q", at.PromptsTitle, msgs)
	}
	if !strings.HasPrefix(msgs[2], "start ") || !strings.HasPrefix(at.Prompts[2].Title, "Start: ") {
		t.Errorf("no prompt starts a workflow: %+v", at.Prompts)
	}

	// The first question titles the thread and is answered in it, with every tool
	// (#general has the default policy).
	h.ai.Push(openaitest.Response{Text: "Paris."})
	h.post(im, alice, "What is the capital of France?", thread)
	answer := h.replies(im, thread, 2)[1]
	if answer.Text != "Paris." || answer.ThreadTS != thread {
		t.Fatalf("answer %q in thread %q", answer.Text, answer.ThreadTS)
	}
	at = waitThread(h, im, thread, "the title", func(a emulator.AssistantThread) bool { return a.Title != "" })
	if at.Title != "What is the capital of France?" {
		t.Errorf("title %q", at.Title)
	}
	first := h.ai.Requests()[0]
	if tools := first.ToolNames(); len(tools) < 2 || !slices.Contains(tools, "calculate") {
		t.Errorf("tools offered while viewing #general: %v", tools)
	}

	// The person moves to #random: its policy (current_time only) applies to the
	// thread's next turn, and the title is not set again.
	if err := h.emu.ChangeAssistantContext(im, thread, "C0RANDOM"); err != nil {
		t.Fatal(err)
	}
	h.ai.Push(openaitest.Response{Text: "It is noon."})
	h.post(im, alice, "What time is it?", thread)
	if got := h.replies(im, thread, 3)[2]; got.Text != "It is noon." {
		t.Fatalf("second answer %q", got.Text)
	}
	reqs := h.ai.Requests()
	if tools := strings.Join(reqs[len(reqs)-1].ToolNames(), ","); tools != "current_time" {
		t.Errorf("tools offered while viewing #random: %s", tools)
	}
	h.idle()
	if n := len(h.emu.Calls("assistant.threads.setTitle")); n != 1 {
		t.Errorf("assistant.threads.setTitle called %d times, want once", n)
	}

	// A new thread opened from #random gets #random's prompts, then the workflows.
	_, thread2, err := h.emu.StartAssistantThread(alice, "C0RANDOM")
	if err != nil {
		t.Fatal(err)
	}
	at = waitThread(h, im, thread2, "the second thread's prompts", func(a emulator.AssistantThread) bool { return len(a.Prompts) > 0 })
	if msgs := promptMessages(at.Prompts); msgs[0] != "What time is it?" || len(msgs) != 4 || !strings.HasPrefix(msgs[1], "start ") {
		t.Errorf("#random's prompts: %q", msgs)
	}
}

// TestE2EAssistantViewContextIsDurable: the viewed channel is kept in the
// conversation's state, so a restart does not widen the thread's tools.
func TestE2EAssistantViewContextIsDurable(t *testing.T) {
	h := newAssistantViewHarness(t)
	h.start()
	im, thread, err := h.emu.StartAssistantThread(alice, "C0RANDOM")
	if err != nil {
		t.Fatal(err)
	}
	h.replies(im, thread, 1)
	h.idle()
	h.stop()
	h.start()
	h.ai.Push(openaitest.Response{Text: "It is noon."})
	h.post(im, alice, "What time is it?", thread)
	h.replies(im, thread, 2)
	reqs := h.ai.Requests()
	if tools := strings.Join(reqs[len(reqs)-1].ToolNames(), ","); tools != "current_time" {
		t.Errorf("tools offered after a restart: %s", tools)
	}
}

// TestE2EDirectMessageIsVisible: outside the assistant view, a person's first DM is
// greeted and answered with replies broadcast to the DM (not hidden behind "2
// replies"), streamed answers included; a later DM is answered without a greeting.
func TestE2EDirectMessageIsVisible(t *testing.T) {
	h := newAssistantViewHarness(t)
	h.env["STREAM_ANSWERS"] = "true"
	h.start()
	h.ai.Push(openaitest.Response{Text: "Hi Alice!"})
	ts := h.post(dm, alice, "hello", "")
	got := h.replies(dm, ts, 2)
	if got[0].Text != "Hello from the assistant view!" || got[1].Text != "Hi Alice!" {
		t.Fatalf("replies %q, %q", got[0].Text, got[1].Text)
	}
	for _, m := range got {
		if m.ThreadTS != ts || m.Subtype != "thread_broadcast" {
			t.Errorf("reply %q: thread %q, subtype %q; want a broadcast reply in %s", m.Text, m.ThreadTS, m.Subtype, ts)
		}
	}
	if n := len(h.emu.Calls("chat.startStream")); n != 0 {
		t.Errorf("chat.startStream called %d times: a stream would stay in the thread", n)
	}
	// A follow-up in the thread is answered there, where the person is.
	h.ai.Push(openaitest.Response{Text: "Still here."})
	h.post(dm, alice, "are you there?", ts)
	h.replies(dm, ts, 3)
	h.idle() // the follow-up is streamed: wait for its end
	if m := h.emu.BotMessages(dm, ts)[2]; m.Text != "Still here." || m.Subtype == "thread_broadcast" {
		t.Errorf("follow-up reply %q, subtype %q", m.Text, m.Subtype)
	}
	// The second top-level DM gets its answer, and no second greeting.
	h.ai.Push(openaitest.Response{Text: "Sure."})
	ts2 := h.post(dm, alice, "one more thing", "")
	h.replies(dm, ts2, 1)
	h.idle()
	if got = h.emu.BotMessages(dm, ts2); len(got) != 1 || got[0].Text != "Sure." || got[0].Subtype != "thread_broadcast" {
		t.Errorf("second DM's replies: %+v", got)
	}
}

// TestE2EAssistantViewChannelStrategy: the viewed channel's strategy applies too
// (STRATEGY_CHANNELS): #random plans, and its planner's tasks are offered #random's
// tools only.
func TestE2EAssistantViewChannelStrategy(t *testing.T) {
	h := newAssistantViewHarness(t)
	h.env["STRATEGY_CHANNELS"] = "C0RANDOM:planner"
	var mu sync.Mutex
	var planned bool
	var taskTools []string
	h.ai.Handle(func(r openaitest.Request) openaitest.Response {
		call := func(name, args string) openaitest.Response {
			return openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: name, Arguments: args}}}
		}
		if r.Chat.ToolChoice != nil && len(r.Chat.Tools) == 1 {
			mu.Lock()
			planned = true
			mu.Unlock()
			switch r.Chat.Tools[0].Function.Name {
			case "commit_understanding":
				return call("commit_understanding", `{"intent":"the time","entities":[]}`)
			case "commit_plan":
				return call("commit_plan", `{"tasks":[{"id":"a","description":"Tell the time","depends_on":[]}]}`)
			case "commit_reflection":
				return call("commit_reflection", `{"answered":true,"missing":"","new_tasks":[]}`)
			}
		}
		if strings.Contains(r.SystemPrompt()+r.LastUserMessage(), "## The task (a)") {
			mu.Lock()
			taskTools = r.ToolNames()
			mu.Unlock()
		}
		return openaitest.Response{Text: "It is noon."}
	})
	h.start()
	im, thread, err := h.emu.StartAssistantThread(alice, "C0RANDOM")
	if err != nil {
		t.Fatal(err)
	}
	h.replies(im, thread, 1)
	h.post(im, alice, "What time is it?", thread)
	h.replies(im, thread, 2)
	h.idle()
	mu.Lock()
	defer mu.Unlock()
	if !planned {
		t.Error("the planner did not run for a thread viewing #random")
	}
	if got := strings.Join(taskTools, ","); got != "current_time" {
		t.Errorf("tools offered to the planner's task: %q", got)
	}
}
