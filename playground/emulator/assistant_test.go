package emulator_test

import (
	"errors"
	"testing"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/threadwright/threadwright/playground/emulator"
)

// TestAssistantThread: opening the assistant view starts a thread in the person's IM
// and sends assistant_thread_started, in the shape slack-go decodes; a context change
// sends assistant_thread_context_changed; the app sets prompts and a title, checked as
// Slack checks them.
func TestAssistantThread(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	b := StartBot(t, emu)
	ctx := testContext(t)

	im, ts, err := emu.StartAssistantThread("U0ALICE", "C0GENERAL")
	if err != nil {
		t.Fatal(err)
	}
	var started *slackevents.AssistantThreadStartedEvent
	for started == nil {
		req, ev := b.NextEvent(t, ctx)
		b.MustAck(t, req)
		started, _ = ev.InnerEvent.Data.(*slackevents.AssistantThreadStartedEvent)
	}
	at := started.AssistantThread
	if at.ChannelID != im || at.ThreadTimeStamp != ts || at.UserID != "U0ALICE" || at.Context.ChannelID != "C0GENERAL" || at.Context.TeamID == "" {
		t.Fatalf("assistant_thread_started %+v", at)
	}

	if err := emu.ChangeAssistantContext(im, ts, "C0RANDOM"); err != nil {
		t.Fatal(err)
	}
	req, ev := b.NextEvent(t, ctx)
	b.MustAck(t, req)
	changed, ok := ev.InnerEvent.Data.(*slackevents.AssistantThreadContextChangedEvent)
	if !ok || changed.AssistantThread.Context.ChannelID != "C0RANDOM" || changed.AssistantThread.ThreadTimeStamp != ts {
		t.Fatalf("context change: %T %+v", ev.InnerEvent.Data, ev.InnerEvent.Data)
	}
	if err := emu.ChangeAssistantContext(im, "1.000001", "C0RANDOM"); !errors.Is(err, emulator.ErrMessageNotFound) {
		t.Errorf("context change of no thread: %v", err)
	}

	api := b.API
	set := func(prompts ...[2]string) error {
		p := slack.AssistantThreadsSetSuggestedPromptsParameters{ChannelID: im, ThreadTS: ts, Title: "Try"}
		for _, x := range prompts {
			p.AddPrompt(x[0], x[1])
		}
		return api.SetAssistantThreadsSuggestedPromptsContext(ctx, p)
	}
	one := [2]string{"A", "a"}
	if err := set(one, one, one, one, one); err == nil || err.Error() != "invalid_arguments" {
		t.Errorf("five prompts: %v", err)
	}
	if err := set(one, [2]string{"", "b"}); err == nil || err.Error() != "invalid_arguments" {
		t.Errorf("a prompt without a title: %v", err)
	}
	if err := set(); err == nil {
		t.Error("no prompts accepted")
	}
	if err := set(one, [2]string{"B", "b"}); err != nil {
		t.Fatal(err)
	}
	if err := api.SetAssistantThreadsTitleContext(ctx, slack.AssistantThreadsSetTitleParameters{ChannelID: im, ThreadTS: ts}); err == nil || err.Error() != "invalid_arguments" {
		t.Errorf("a title without title: %v", err)
	}
	if err := api.SetAssistantThreadsTitleContext(ctx, slack.AssistantThreadsSetTitleParameters{ChannelID: im, ThreadTS: "1.000001", Title: "x"}); err == nil || err.Error() != "invalid_thread_ts" {
		t.Errorf("a title of no thread: %v", err)
	}
	if err := api.SetAssistantThreadsTitleContext(ctx, slack.AssistantThreadsSetTitleParameters{ChannelID: im, ThreadTS: ts, Title: "Capitals"}); err != nil {
		t.Fatal(err)
	}
	got, ok := emu.AssistantThread(im, ts)
	if !ok || got.Title != "Capitals" || got.PromptsTitle != "Try" || len(got.Prompts) != 2 || got.Prompts[1] != (emulator.SuggestedPrompt{Title: "B", Message: "b"}) || got.Context != "C0RANDOM" {
		t.Errorf("thread %+v", got)
	}
	if n := len(emu.Calls("assistant.threads.setSuggestedPrompts")); n != 4 {
		t.Errorf("%d setSuggestedPrompts calls recorded, want 4", n)
	}
}

// TestPageAssistantView: the page opens the assistant view beside a channel, and its
// state carries the thread's title and suggested prompts once the app sets them.
func TestPageAssistantView(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	b := StartBot(t, emu)
	ctx := testContext(t)
	out := mustPage(t, emu, "/ui/assistant", map[string]string{"user": "U0ALICE", "context": "C0GENERAL"})
	im, ts := out["channel"].(string), out["thread_ts"].(string)
	if im != "D0ALICE" || ts == "" {
		t.Fatalf("answer %v", out)
	}
	p := slack.AssistantThreadsSetSuggestedPromptsParameters{ChannelID: im, ThreadTS: ts}
	p.AddPrompt("Capital", "What is the capital of France?")
	if err := b.API.SetAssistantThreadsSuggestedPromptsContext(ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := b.API.SetAssistantThreadsTitleContext(ctx, slack.AssistantThreadsSetTitleParameters{ChannelID: im, ThreadTS: ts, Title: "Capitals"}); err != nil {
		t.Fatal(err)
	}
	status, state := pageCall(t, emu, "GET", "/ui/state?user=U0ALICE", nil)
	threads, _ := state["assistant"].([]any)
	if status != 200 || len(threads) != 1 {
		t.Fatalf("state: %d, assistant %v", status, state["assistant"])
	}
	at := threads[0].(map[string]any)
	prompts, _ := at["prompts"].([]any)
	if at["title"] != "Capitals" || at["context"] != "C0GENERAL" || len(prompts) != 1 || prompts[0].(map[string]any)["message"] != "What is the capital of France?" {
		t.Errorf("assistant thread on the page: %v", at)
	}
	// The page keeps #general in its main pane and the assistant thread beside it: one
	// state holds the messages of both, and of no other conversation.
	status, state = pageCall(t, emu, "GET", "/ui/state?user=U0ALICE&channel=C0GENERAL&channel="+im, nil)
	msgs, _ := state["messages"].(map[string]any)
	if _, general := msgs["C0GENERAL"]; status != 200 || !general || len(msgs) != 2 {
		t.Errorf("state of the channel and the assistant thread beside it: %d, messages of %v", status, keys(msgs))
	} else if thread, _ := msgs[im].([]any); len(thread) == 0 {
		t.Errorf("the assistant thread's messages are missing: %v", msgs[im])
	}
	if status, _ := pageCall(t, emu, "GET", "/ui/state?user=U0ALICE&channel=C0GENERAL&channel=C0NOPE", nil); status != 404 {
		t.Errorf("a second channel that does not exist: %d, want 404", status)
	}
	if status, _ := pageCall(t, emu, "POST", "/ui/assistant", map[string]string{"user": "U0NOBODY"}); status != 404 && status != 400 {
		t.Errorf("an unknown user: %d", status)
	}
}

// keys returns m's keys, for a failure message.
func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
