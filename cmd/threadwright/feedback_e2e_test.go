package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/playground/emulator"
	"github.com/threadwright/threadwright/store"
	"github.com/threadwright/threadwright/store/storetest"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// feedbackJSON runs `threadwright feedback --since 7d --json` on the harness's store
// and decodes what it prints.
func (h *harness) feedbackJSON() conversation.FeedbackReport {
	h.t.Helper()
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"feedback", "--since", "7d", "--json"}, &out, &errOut); err != nil {
		h.t.Fatalf("feedback --json: %v\n%s", err, errOut.String())
	}
	var r struct {
		Counts   []conversation.FeedbackCount `json:"counts"`
		Negative []struct {
			Channel   string   `json:"channel"`
			MessageTS string   `json:"message_ts"`
			User      string   `json:"user"`
			Rating    string   `json:"rating"`
			Reason    string   `json:"reason"`
			Model     string   `json:"model"`
			Tools     []string `json:"tools"`
			LatencyMS int64    `json:"latency_ms"`
		} `json:"negative"`
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		h.t.Fatalf("feedback --json printed %q: %v", out.String(), err)
	}
	rep := conversation.FeedbackReport{Counts: r.Counts}
	for _, n := range r.Negative {
		rep.Negative = append(rep.Negative, conversation.Feedback{Key: conversation.Key{ChannelID: n.Channel}, MessageTS: n.MessageTS,
			UserID: n.User, Rating: conversation.Rating(n.Rating), Reason: n.Reason, Model: n.Model, Tools: n.Tools,
			Latency: time.Duration(n.LatencyMS) * time.Millisecond})
	}
	return rep
}

// clickFeedback clicks user's thumbs up or down on the answer ts and waits until the
// click is acked (feedback is stored before the ack).
func (h *harness) clickFeedback(ts, user string, positive bool) {
	h.t.Helper()
	if _, err := h.emu.ClickFeedback(general, ts, user, positive); err != nil {
		h.t.Fatal(err)
	}
	h.idle()
}

// TestE2EFeedback: an answer carries the feedback buttons (the progress message does
// not); a thumbs up is stored with the turn's model, tools, latency and tokens; a
// thumbs down opens the reason modal and the reason is stored; a forged click is
// refused and stores nothing; `threadwright feedback --since 7d` prints the counts
// per channel and strategy and the reason, as a table and as JSON.
func TestE2EFeedback(t *testing.T) {
	t.Run("SQLite", func(t *testing.T) { testFeedback(t, "") })
	t.Run("Postgres", func(t *testing.T) { testFeedback(t, storetest.PostgresDSN(t)) })
}

func testFeedback(t *testing.T, databaseURL string) {
	h := newHarness(t, emulator.Config{})
	h.env["DATABASE_URL"] = databaseURL
	h.tools = func(r *agents.Registry) error {
		r.MustRegister(agents.ToolSpec{Name: "lookup", Description: "Looks a capital up", Category: "Test",
			Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
			agents.ToolFunc(func(context.Context, json.RawMessage) (string, error) { return "Paris", nil }))
		return nil
	}
	h.start()

	h.ai.Push(
		openaitest.Response{ToolCalls: []openaitest.ToolCall{{ID: "call_1", Name: "lookup", Arguments: `{}`}}, Usage: openaitest.Usage{PromptTokens: 100, CompletionTokens: 10}},
		openaitest.Response{Text: "The capital of France is Paris.", Usage: openaitest.Usage{PromptTokens: 150, CompletionTokens: 20}},
	)
	thread := h.post(general, alice, "<@U0BOT> what is the capital of France?", "")
	got := h.replies(general, thread, 2) // the progress message, then the answer
	h.idle()
	progress, answer := got[0], got[1]
	if answer.Text != "The capital of France is Paris." {
		t.Fatalf("answer %q", answer.Text)
	}
	if !h.emu.HasFeedbackButtons(general, answer.TS, alice) {
		t.Fatalf("the answer has no feedback buttons: %s", answer.Blocks)
	}
	if h.emu.HasFeedbackButtons(general, progress.TS, alice) {
		t.Error("the progress message has feedback buttons")
	}
	if !strings.Contains(string(answer.Blocks), "The capital of France is Paris.") {
		t.Errorf("the answer's blocks do not show its text: %s", answer.Blocks)
	}

	{ // Positive
		h.clickFeedback(answer.TS, alice, true)
		r := h.feedbackJSON()
		if len(r.Counts) != 1 || r.Counts[0] != (conversation.FeedbackCount{Channel: general, Strategy: "react", Positive: 1}) {
			t.Fatalf("counts %+v; want one positive in %s, react", r.Counts, general)
		}
		// The click is acknowledged where alice sees it, and only to her.
		h.waitFor("the thanks for the thumbs up", func() bool {
			for _, m := range h.emu.Ephemerals(general, alice) {
				if strings.HasPrefix(m.Text, "Thanks for the feedback") {
					return true
				}
			}
			return false
		})
		if n := len(h.emu.Ephemerals(general, bob)); n != 0 {
			t.Errorf("bob got %d notices for alice's click", n)
		}
	}

	{ // NegativeWithReason
		h.clickFeedback(answer.TS, bob, false)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := h.emu.WaitForView(ctx, bob); err != nil {
			t.Fatal(err)
		}
		// The click alone is stored already, without a reason.
		r := h.feedbackJSON()
		if len(r.Negative) != 1 || r.Negative[0].UserID != bob || r.Negative[0].Reason != "" {
			t.Fatalf("negative before the reason: %+v", r.Negative)
		}
		env, err := h.emu.SubmitModal(bob, "It should cite the source.")
		if err != nil {
			t.Fatal(err)
		}
		h.waitFor("the ack of the submission", func() bool { e, ok := h.emu.Envelope(env); return ok && e.Acked })
		h.idle()
		r = h.feedbackJSON()
		if len(r.Counts) != 1 || r.Counts[0].Positive != 1 || r.Counts[0].Negative != 1 {
			t.Fatalf("counts %+v; want one positive, one negative", r.Counts)
		}
		n := r.Negative[0]
		if n.Reason != "It should cite the source." || n.MessageTS != answer.TS || n.Model != "gpt-test" ||
			!slices.Equal(n.Tools, []string{"lookup"}) || n.Latency <= 0 {
			t.Fatalf("negative %+v; want the reason and the turn (gpt-test, lookup, a latency)", n)
		}
	}

	{ // TokensAndTable
		var out, errOut bytes.Buffer
		if err := run(context.Background(), []string{"feedback", "--since", "7d"}, &out, &errOut); err != nil {
			t.Fatalf("feedback: %v\n%s", err, errOut.String())
		}
		table := out.String()
		t.Logf("threadwright feedback --since 7d:\n%s", table)
		for _, want := range []string{"CHANNEL", "STRATEGY", general, "react", "It should cite the source.", "gpt-test", "lookup", bob,
			"280"} { // the turn's tokens: 100+10+150+20
			if !strings.Contains(table, want) {
				t.Errorf("the table lacks %q:\n%s", want, table)
			}
		}
		if !strings.Contains(table, general+"  react     1         1") {
			t.Errorf("the table does not count 1 positive, 1 negative in %s, react:\n%s", general, table)
		}
	}

	{ // SecondClickReplaces
		h.clickFeedback(answer.TS, alice, false) // alice changes her mind
		r := h.feedbackJSON()
		if len(r.Counts) != 1 || r.Counts[0].Positive != 0 || r.Counts[0].Negative != 2 {
			t.Fatalf("counts %+v; want alice's click replaced: 0 positive, 2 negative", r.Counts)
		}
	}

	{ // ForgedClickRefused
		forged, _ := conversation.Action{Name: conversation.ActionFeedback, Channel: general, ThreadTS: thread, Arg: "positive"}.Encode()
		if _, err := h.emu.ClickOld(general, answer.TS, bob, emulator.Button{Type: "button", ActionID: "tw:feedback", Value: forged}); err != nil {
			t.Fatal(err)
		}
		h.idle()
		h.waitFor("bob to be told", func() bool {
			for _, m := range h.emu.Ephemerals(general, bob) {
				if strings.Contains(m.Text, "can no longer be used") {
					return true
				}
			}
			return false
		})
		r := h.feedbackJSON()
		for _, c := range r.Counts {
			if c.Positive != 0 {
				t.Fatalf("counts %+v: the forged thumbs up was stored", r.Counts)
			}
		}
	}
}

// TestE2EFeedbackOnStreamedAnswer: a streamed answer gets its feedback buttons when
// its stream stops (chat.stopStream's blocks), and a click on it is stored with the
// turn's tokens.
func TestE2EFeedbackOnStreamedAnswer(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.env["STREAM_ANSWERS"] = "true"
	h.start()
	h.ai.Push(openaitest.Response{Text: "**Paris** is the capital of France.", Usage: openaitest.Usage{PromptTokens: 50, CompletionTokens: 7}})
	thread := h.post(general, alice, "<@U0BOT> what is the capital of France?", "")
	got := h.replies(general, thread, 1)
	h.waitFor("the stream to stop", func() bool {
		m, _ := h.emu.Message(general, got[0].TS)
		return !m.Streaming
	})
	h.idle()
	if !h.emu.HasFeedbackButtons(general, got[0].TS, alice) {
		m, _ := h.emu.Message(general, got[0].TS)
		t.Fatalf("the streamed answer has no feedback buttons: %s", m.Blocks)
	}
	h.clickFeedback(got[0].TS, bob, false)
	r := h.feedbackJSON()
	if len(r.Negative) != 1 || r.Negative[0].Model != "gpt-test" || r.Negative[0].MessageTS != got[0].TS {
		t.Fatalf("negative %+v; want bob's on the streamed answer with its model", r.Negative)
	}
}

// TestFeedbackCommand: `threadwright help` lists the command; where no store exists
// it fails saying where it looked and creates none; on a store without feedback it
// says so; --dev reads the playground's store; --since takes days or a duration and
// refuses anything else.
func TestFeedbackCommand(t *testing.T) {
	dataDir := t.TempDir()
	setEnv(t, map[string]string{"DATA_DIR": dataDir, "DATABASE_URL": "", "SLACK_BOT_TOKEN": ""})
	if out, err := runCLI(t, "help"); err != nil || !strings.Contains(out, "threadwright feedback [--since 7d] [--json] [--dev]") {
		t.Fatalf("help: %v\n%s", err, out)
	}
	for _, cmd := range [][]string{{"feedback"}, {"feedback", "--dev"}, {"usage"}, {"usage", "--dev"}} {
		_, err := runCLI(t, cmd...)
		if err == nil || !strings.Contains(err.Error(), cmd[0]+": no store at "+dataDir) {
			t.Errorf("%s with no store: err %v; want one saying where it looked", cmd, err)
		}
	}
	if entries, _ := os.ReadDir(dataDir); len(entries) > 0 {
		t.Fatalf("reading created %s in DATA_DIR; want nothing created", entries[0].Name())
	}
	// The playground's store only: the error points at --dev, which reads it.
	dev, err := store.Open(context.Background(), store.Options{DataDir: devDataDir(dataDir)})
	if err != nil {
		t.Fatal(err)
	}
	dev.Close()
	if _, err := runCLI(t, "feedback"); err == nil || !strings.Contains(err.Error(), "read with --dev") {
		t.Errorf("feedback beside a playground store: err %v; want a pointer to --dev", err)
	}
	if out, err := runCLI(t, "feedback", "--dev"); err != nil || !strings.Contains(out, "No feedback.") {
		t.Errorf("feedback --dev: %v\n%s", err, out)
	}
	if _, err := runCLI(t, "migrate"); err != nil {
		t.Fatal(err)
	}
	for _, since := range []string{"7d", "36h"} {
		out, err := runCLI(t, "feedback", "--since", since)
		if err != nil || !strings.Contains(out, "No feedback.") {
			t.Errorf("feedback --since %s: %v\n%s", since, err, out)
		}
	}
	out, err := runCLI(t, "feedback", "--json")
	if err != nil || !strings.Contains(out, `"counts": []`) || !strings.Contains(out, `"negative": []`) {
		t.Errorf("feedback --json on no feedback: %v\n%s", err, out)
	}
	for _, bad := range []string{"week", "-3d", "0h"} {
		if _, err := runCLI(t, "feedback", "--since", bad); err == nil || !strings.Contains(err.Error(), "--since") {
			t.Errorf("--since %s: err %v; want a --since error", bad, err)
		}
	}
}
