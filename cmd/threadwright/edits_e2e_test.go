package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/threadwright/threadwright/playground/emulator"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// Edits and deletions (docs/architecture.md, "Edits and deletions"), end to end: the
// emulator delivers message_changed and message_deleted as Slack does; the model is
// openaitest behind the real go-openai client.

// echoModel answers every request "Answer to: <the last user message>", except that
// a request whose last user message contains hold waits until release is closed
// (or the request ends): with MAX_CONCURRENT_TURNS=1 it keeps the other threads'
// inputs waiting, their turns not begun.
func echoModel(h *harness, hold string, release <-chan struct{}, held chan<- struct{}) {
	h.ai.Handle(func(r openaitest.Request) openaitest.Response {
		q := r.LastUserMessage()
		if hold != "" && strings.Contains(q, hold) {
			held <- struct{}{}
			select {
			case <-release:
			case <-r.Done():
			}
		}
		return openaitest.Response{Text: "Answer to: " + q}
	})
}

// modelSaw reports whether any model request so far carried text.
func modelSaw(h *harness, text string) bool {
	for _, r := range h.ai.Requests() {
		if strings.Contains(fmt.Sprint(r.Chat.Messages), text) {
			return true
		}
	}
	return false
}

// storedMessages stops the bot and returns the texts and summary of thread's
// stored checkpoint.
func storedMessages(h *harness, thread string) (texts []string, summary string) {
	h.t.Helper()
	cp := storedCheckpoint(h, thread, 100)
	for _, m := range cp.Messages {
		texts = append(texts, m.Text)
	}
	return texts, cp.Conversation.State.Summary
}

// TestE2EEditBeforeTheTurnIsAnsweredEdited: a question edited while its input waits
// (another thread holds the only turn slot) is answered in its edited form, once;
// the model never sees the text before the edit.
func TestE2EEditBeforeTheTurnIsAnsweredEdited(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.env["MAX_CONCURRENT_TURNS"] = "1"
	h.start()
	release, held := make(chan struct{}), make(chan struct{}, 1)
	echoModel(h, "blocker", release, held)
	h.post(general, alice, "<@U0BOT> blocker question", "")
	<-held // the only slot is taken
	ts := h.post(general, bob, "<@U0BOT> how many vacation dayz do I get?", "")
	h.acked()
	if err := h.emu.EditUserMessage(general, ts, "<@U0BOT> how many vacation days do I get?"); err != nil {
		t.Fatal(err)
	}
	h.acked()
	close(release)
	h.replies(general, ts, 1)
	h.idle()
	msgs := h.emu.BotMessages(general, ts)
	if len(msgs) != 1 || msgs[0].Text != "Answer to: how many vacation days do I get?" {
		t.Fatalf("bot messages %+v; want one answer to the edited question", msgs)
	}
	if modelSaw(h, "dayz") {
		t.Error("the model saw the text from before the edit")
	}
	if n := len(h.ai.Requests()); n != 2 {
		t.Errorf("%d model requests; want 2 (the blocker, the edited question)", n)
	}
}

// TestE2EEditAfterTheAnswerReplacesIt: an edit of the latest answered question is
// answered again, once, in place of the first answer (chat.update: still one bot
// message, marked as edited); a later edit of it, no longer the latest, is noted in
// the history and not answered; an edit that leaves the text as it was is ignored.
func TestE2EEditAfterTheAnswerReplacesIt(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.start()
	echoModel(h, "", nil, nil)
	ts := h.post(general, alice, "<@U0BOT> what is 2+2?", "")
	first := h.replies(general, ts, 1)[0]
	h.idle()
	if err := h.emu.EditUserMessage(general, ts, "<@U0BOT> what is 3+3?"); err != nil {
		t.Fatal(err)
	}
	h.waitFor("the answer replaced", func() bool {
		msgs := h.emu.BotMessages(general, ts)
		return len(msgs) == 1 && strings.HasPrefix(msgs[0].Text, "Answer to: what is 3+3?")
	})
	h.idle()
	msgs := h.emu.BotMessages(general, ts)
	want := "Answer to: what is 3+3?\n\n_Answer updated for the edited question._"
	if len(msgs) != 1 || msgs[0].TS != first.TS || msgs[0].Text != want {
		t.Fatalf("bot messages %+v; want the first answer (%s) replaced by %q", msgs, first.TS, want)
	}
	if n := len(h.ai.Requests()); n != 2 {
		t.Fatalf("%d model requests; want 2 (the question, its edit)", n)
	}

	// Metadata only: the text is the same (an unfurl, a reaction); nothing happens.
	if err := h.emu.EditUserMessage(general, ts, "<@U0BOT> what is 3+3?"); err != nil {
		t.Fatal(err)
	}
	h.idle()
	if n := len(h.ai.Requests()); n != 2 || len(h.emu.BotMessages(general, ts)) != 1 {
		t.Fatalf("%d model requests after an edit of nothing but metadata; want it ignored", n)
	}

	// A follow-up, then an edit of the older question: noted, not answered.
	h.post(general, alice, "what about 4+4?", ts)
	h.replies(general, ts, 2)
	h.idle()
	if err := h.emu.EditUserMessage(general, ts, "<@U0BOT> what is 5+5?"); err != nil {
		t.Fatal(err)
	}
	h.idle()
	if n := len(h.ai.Requests()); n != 3 || len(h.emu.BotMessages(general, ts)) != 2 {
		t.Fatalf("%d model requests, %d bot messages after an edit of an older question; want it not answered", n, len(h.emu.BotMessages(general, ts)))
	}
	h.post(general, alice, "and 6+6?", ts)
	h.replies(general, ts, 3)
	h.idle()
	last := h.ai.Requests()[3]
	if hist := fmt.Sprint(last.Chat.Messages); !strings.Contains(hist, "{user what is 5+5? (edited) ") || strings.Contains(hist, "2+2") || strings.Contains(hist, "{user what is 3+3?") {
		t.Errorf("the next request's history %s; want the older question as edited, noted", hist)
	}
}

// TestE2EDeletedMessageLeavesWhatTheModelSees: a deleted question's text is absent
// from the next model request and from the stored checkpoint; a deleted question
// whose input still waits is not answered.
func TestE2EDeletedMessageLeavesWhatTheModelSees(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.env["MAX_CONCURRENT_TURNS"] = "1"
	h.start()
	release, held := make(chan struct{}), make(chan struct{}, 1)
	h.ai.Handle(func(r openaitest.Request) openaitest.Response {
		q := r.LastUserMessage()
		if strings.Contains(q, "blocker") {
			held <- struct{}{}
			select {
			case <-release:
			case <-r.Done():
			}
		}
		return openaitest.Response{Text: "Noted."} // never repeats the question
	})
	ts := h.post(general, alice, "<@U0BOT> my password is hunter2, is it strong?", "")
	h.replies(general, ts, 1)
	h.idle()
	if err := h.emu.DeleteMessage(general, ts); err != nil {
		t.Fatal(err)
	}
	h.idle()
	h.post(general, alice, "<@U0BOT> thanks, anything else?", ts)
	h.replies(general, ts, 2)
	h.idle()
	reqs := h.ai.Requests()
	if len(reqs) != 2 || strings.Contains(fmt.Sprint(reqs[1].Chat.Messages), "hunter2") {
		t.Fatalf("%d requests; the second %v; want no trace of the deleted text", len(reqs), reqs[len(reqs)-1].Chat.Messages)
	}

	// A waiting question deleted before its turn began is not answered.
	h.post(general, alice, "<@U0BOT> blocker question", "")
	<-held
	waiting := h.post(general, bob, "<@U0BOT> my token is tok-secret-42", "")
	h.acked()
	if err := h.emu.DeleteMessage(general, waiting); err != nil {
		t.Fatal(err)
	}
	h.acked()
	close(release)
	h.idle()
	if msgs := h.emu.BotMessages(general, waiting); len(msgs) != 0 || modelSaw(h, "tok-secret-42") {
		t.Fatalf("bot messages %+v; want the deleted question unanswered and unseen", msgs)
	}

	texts, summary := storedMessages(h, ts)
	all := strings.Join(texts, "\n") + summary
	if strings.Contains(all, "hunter2") || !strings.Contains(all, "(message deleted)") {
		t.Fatalf("stored messages %q, summary %q; want the deleted text gone", texts, summary)
	}
}

// acked waits until every envelope the emulator sent has been acked: its input is
// stored (or dropped).
func (h *harness) acked() {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := h.emu.WaitForAcks(ctx); err != nil {
		h.t.Fatal(err)
	}
}
