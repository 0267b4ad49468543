package bot_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/threadwright/threadwright/bot"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/playground/emulator"
)

// recorder is a Submitter that records the inputs it is given.
type recorder struct {
	mu     sync.Mutex
	inputs []conversation.Input
	// changed is closed and replaced when an input arrives.
	changed chan struct{}
	// fail, when set, is returned for inputs it matches.
	fail func(conversation.Input) error
}

func newRecorder() *recorder { return &recorder{changed: make(chan struct{})} }

func (r *recorder) Submit(_ context.Context, in conversation.Input) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.inputs = append(r.inputs, in)
	close(r.changed)
	r.changed = make(chan struct{})
	if r.fail != nil {
		if err := r.fail(in); err != nil {
			return false, err
		}
	}
	return true, nil
}

// wait returns the inputs once there are more than n, or what there is when ctx ends.
func (r *recorder) wait(ctx context.Context, n int) ([]conversation.Input, error) {
	for {
		r.mu.Lock()
		inputs, changed := append([]conversation.Input(nil), r.inputs...), r.changed
		r.mu.Unlock()
		if len(inputs) > n {
			return inputs, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return inputs, ctx.Err()
		}
	}
}

func (r *recorder) all() []conversation.Input {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]conversation.Input(nil), r.inputs...)
}

// harness is the real bot (real slack-go client) running against an emulator, with a
// recorder for a Submitter.
type harness struct {
	emu *emulator.Server
	api *slack.Client
	rec *recorder
	msg *bot.SigningMessenger
	me  bot.Identity
	// signer signs the cards msg posts, and the Bot checks clicks with it.
	signer *bot.Signer
	bot    *bot.Bot
	// seen counts the inputs next has returned.
	seen int
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func testContext(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	tb.Cleanup(cancel)
	return ctx
}

// startBot starts an emulator and a Bot connected to it; both stop with the test.
func startBot(t *testing.T) *harness { return startBotWith(t, emulator.Config{}, nil) }

// startBotWith is startBot with emulator settings, and configure (when not nil)
// changing the Bot's Config.
func startBotWith(tb testing.TB, emuCfg emulator.Config, configure func(*bot.Config)) *harness {
	tb.Helper()
	if emuCfg.Logger == nil {
		emuCfg.Logger = discard()
	}
	emu, err := emulator.NewServer(emuCfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = emu.Close() })
	cfg := emu.Config()
	api := slack.New(cfg.BotToken, slack.OptionAPIURL(emu.URL()), slack.OptionAppLevelToken(cfg.AppToken))
	ctx := testContext(tb)
	me, err := bot.Authenticate(ctx, api)
	if err != nil {
		tb.Fatal(err)
	}
	signer, err := bot.NewSigner([]byte("bot tests' signing key, 32 bytes"))
	if err != nil {
		tb.Fatal(err)
	}
	h := &harness{emu: emu, api: api, rec: newRecorder(), msg: bot.NewSigningMessenger(bot.NewMessenger(api, me, discard()), signer), me: me, signer: signer}
	botCfg := bot.Config{API: api, Identity: me, Submitter: h.rec, Logger: discard(), Signer: signer}
	if configure != nil {
		configure(&botCfg)
	}
	b, err := bot.New(botCfg)
	if err != nil {
		tb.Fatal(err)
	}
	h.bot = b
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(runCtx) }()
	tb.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			tb.Errorf("Run: %v", err)
		}
	})
	if err := emu.WaitForConnections(ctx, 1); err != nil {
		tb.Fatal(err)
	}
	return h
}

// next waits for the input after the last one next returned, and returns it.
func (h *harness) next(t *testing.T) conversation.Input {
	t.Helper()
	got, err := h.rec.wait(testContext(t), h.seen)
	if err != nil {
		t.Fatalf("waiting for input %d, have %+v", h.seen+1, got)
	}
	h.seen++
	return got[h.seen-1]
}

// noMoreInputs checks that no input came after the last one next returned.
func (h *harness) noMoreInputs(t *testing.T) {
	t.Helper()
	if got := h.rec.all(); len(got) > h.seen {
		t.Errorf("unexpected inputs %+v", got[h.seen:])
	}
}

// waitAcked waits until the envelope is acked.
func (h *harness) waitAcked(t *testing.T, id string) emulator.Envelope {
	t.Helper()
	var env emulator.Envelope
	err := h.emu.WaitFor(testContext(t), func() bool {
		env, _ = h.emu.Envelope(id)
		return env.Acked
	})
	if err != nil {
		t.Fatalf("envelope %s not acked: %v", id, err)
	}
	return env
}

// openView waits until a view is open for user and returns it.
func (h *harness) openView(t *testing.T, user string) emulator.View {
	t.Helper()
	view, err := h.emu.WaitForView(testContext(t), user)
	if err != nil {
		t.Fatal(err)
	}
	return view
}

// thread posts alice's message that starts a thread and a card in it, as the
// workflow engine would; it returns the thread's key and the card's ts.
func (h *harness) thread(t *testing.T, card func(conversation.Key) conversation.Card) (conversation.Key, string) {
	t.Helper()
	parent, err := h.emu.PostUserMessage("C0GENERAL", "U0ALICE", "<@U0BOT> start proposal", "")
	if err != nil {
		t.Fatal(err)
	}
	h.next(t) // the mention
	key := conversation.Key{TeamID: h.me.TeamID, ChannelID: "C0GENERAL", ThreadTS: parent}
	ts, err := h.msg.PostCard(testContext(t), key, card(key), conversation.Tag{})
	if err != nil {
		t.Fatal(err)
	}
	return key, ts
}

// inThread rewrites the actions of a test card for key's thread.
func inThread(c conversation.Card, key conversation.Key) conversation.Card {
	for i := range c.Blocks {
		for _, list := range [][]conversation.Button{c.Blocks[i].Buttons, c.Blocks[i].Menu} {
			for j := range list {
				list[j].Action.Channel, list[j].Action.ThreadTS = key.ChannelID, key.ThreadTS
			}
		}
	}
	return c
}

func TestInteractions(t *testing.T) {
	h := startBot(t)
	key, ts := h.thread(t, func(k conversation.Key) conversation.Card { return inThread(artifactCard(budgetText), k) })
	want := func(name conversation.ActionName) conversation.Action {
		return conversation.Action{Name: name, Channel: key.ChannelID, ThreadTS: key.ThreadTS, Artifact: "budget", Rev: 4}
	}

	t.Run("ClickButton", func(t *testing.T) {
		id, err := h.emu.ClickButtonByLabel("C0GENERAL", ts, "U0BOB", "Approve")
		if err != nil {
			t.Fatal(err)
		}
		in := h.next(t)
		env := h.waitAcked(t, id)
		var payload struct {
			TriggerID string `json:"trigger_id"`
		}
		_ = json.Unmarshal(env.Payload, &payload)
		if in.Kind != conversation.KindAction || in.ID != conversation.InteractionInputID("T0TEAM", payload.TriggerID) || in.Key != key ||
			in.Action == nil || in.Action.Action != want(conversation.ActionApprove) || in.Action.UserID != "U0BOB" || in.Action.MessageTS != ts {
			t.Errorf("input %+v %+v", in, in.Action)
		}

		t.Run("Redelivered", func(t *testing.T) {
			if err := h.emu.Redeliver(id); err != nil {
				t.Fatal(err)
			}
			again := h.next(t)
			if again.ID != in.ID || again.Action.Action != in.Action.Action {
				t.Errorf("redelivered input %+v, first %+v", again, in)
			}
		})
	})

	t.Run("ModalButton", func(t *testing.T) {
		id, err := h.emu.ClickButtonByLabel("C0GENERAL", ts, "U0ALICE", "Request changes")
		if err != nil {
			t.Fatal(err)
		}
		h.waitAcked(t, id)
		view := h.openView(t, "U0ALICE")
		h.noMoreInputs(t) // a click that opens a modal submits nothing
		var v slack.View
		if err := json.Unmarshal(view.View, &v); err != nil {
			t.Fatal(err)
		}
		if v.CallbackID != bot.ModalCallbackID || v.Title.Text != "Request changes" || v.Submit.Text != "Send" {
			t.Errorf("view %+v", v)
		}

		t.Run("RedeliveredClickOpensNoSecondModal", func(t *testing.T) {
			if err := h.emu.Redeliver(id); err != nil {
				t.Fatal(err)
			}
			h.waitAcked(t, id)
			// The bot handles envelopes in order: once a later click is submitted,
			// the redelivered one was handled (a second views.open would have
			// been started, and would fail: the trigger is used).
			if _, err := h.emu.ClickButtonByLabel("C0GENERAL", ts, "U0BOB", "Approve"); err != nil {
				t.Fatal(err)
			}
			h.next(t)
			if calls := h.emu.Calls("views.open"); len(calls) != 1 {
				t.Errorf("%d views.open calls", len(calls))
			}
		})

		sub, err := h.emu.SubmitModal("U0ALICE", "Cut travel by half.")
		if err != nil {
			t.Fatal(err)
		}
		in := h.next(t)
		env := h.waitAcked(t, sub)
		if in.Kind != conversation.KindAction || in.Key != key || in.Action.Action != want(conversation.ActionRequestChanges) ||
			in.Action.Text != "Cut travel by half." || in.Action.UserID != "U0ALICE" || !strings.HasPrefix(in.ID, "int:T0TEAM:") {
			t.Errorf("input %+v %+v", in, in.Action)
		}
		if len(env.AckPayload) > 0 && string(env.AckPayload) != "null" {
			t.Errorf("view_submission acked with %s", env.AckPayload)
		}
		if h.emu.Views()[0].Open {
			t.Error("the modal stayed open")
		}
	})

	t.Run("MenuItem", func(t *testing.T) {
		if _, err := h.emu.ChooseMenuItem("C0GENERAL", ts, "U0BOB", "Restart"); err != nil {
			t.Fatal(err)
		}
		if in := h.next(t); in.Kind != conversation.KindAction || in.Action.Action != want(conversation.ActionRestart) || in.Action.MessageTS != ts {
			t.Errorf("input %+v %+v", in, in.Action)
		}
		if _, err := h.emu.ChooseMenuItem("C0GENERAL", ts, "U0BOB", "Edit…"); err != nil {
			t.Fatal(err)
		}
		h.openView(t, "U0BOB")
		if _, err := h.emu.SubmitModal("U0BOB", "Shorter, please"); err != nil {
			t.Fatal(err)
		}
		if in := h.next(t); in.Action.Action != want(conversation.ActionEdit) || in.Action.Text != "Shorter, please" {
			t.Errorf("input %+v %+v", in, in.Action)
		}
	})

	t.Run("SlashCommand", func(t *testing.T) {
		id, err := h.emu.SlashCommand("C0GENERAL", "U0ALICE", "/threadwright", " restart budget ")
		if err != nil {
			t.Fatal(err)
		}
		in := h.next(t)
		h.waitAcked(t, id)
		if in.Kind != conversation.KindCommand || in.Key != (conversation.Key{TeamID: "T0TEAM", ChannelID: "C0GENERAL"}) ||
			!reflect.DeepEqual(*in.Command, conversation.CommandInput{Source: conversation.SourceSlash, UserID: "U0ALICE", Line: "restart budget", TriggerID: strings.TrimPrefix(in.ID, "int:T0TEAM:")}) ||
			!strings.HasPrefix(in.ID, "int:T0TEAM:") {
			t.Errorf("input %+v %+v", in, in.Command)
		}
		if eph := h.emu.Ephemerals("C0GENERAL", "U0ALICE"); len(eph) != 0 {
			t.Errorf("the ack answered the command: %+v", eph)
		}
	})

	t.Run("MessageShortcut", func(t *testing.T) {
		if _, err := h.emu.MessageShortcut("C0GENERAL", ts, "U0BOB", bot.ShortcutCallbackID); err != nil {
			t.Fatal(err)
		}
		in := h.next(t)
		if in.Kind != conversation.KindCommand || in.Key != key ||
			!reflect.DeepEqual(*in.Command, conversation.CommandInput{Source: conversation.SourceShortcut, UserID: "U0BOB", MessageTS: ts}) {
			t.Errorf("input %+v %+v", in, in.Command)
		}
	})

	t.Run("Malformed", func(t *testing.T) {
		payloads := []any{
			map[string]any{"type": "block_actions", "trigger_id": "1.2.3", "user": map[string]any{"id": "U0BOB"}, "team": map[string]any{"id": "T0TEAM"},
				"container": map[string]any{"type": "message", "message_ts": ts, "channel_id": "C0GENERAL"},
				"actions":   []any{map[string]any{"type": "button", "action_id": "tw:4:0", "block_id": "b", "value": "{broken"}}},
			map[string]any{"type": "message_action", "callback_id": "someone_elses", "trigger_id": "1.2.4", "user": map[string]any{"id": "U0BOB"}},
			map[string]any{"type": "view_submission", "trigger_id": "1.2.5", "user": map[string]any{"id": "U0BOB"},
				"view": map[string]any{"id": "V1", "callback_id": bot.ModalCallbackID, "private_metadata": "nope"}},
			json.RawMessage(`{"type":"block_actions","actions":"not a list"}`),
		}
		var ids []string
		for _, p := range payloads {
			id, err := h.emu.SendEnvelope(emulator.EnvelopeInteractive, p, 0)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		for _, id := range ids {
			h.waitAcked(t, id)
		}
		// A good click after them shows the bot still runs and submitted nothing else.
		if _, err := h.emu.ClickButtonByLabel("C0GENERAL", ts, "U0BOB", "Approve"); err != nil {
			t.Fatal(err)
		}
		if in := h.next(t); in.Action == nil || in.Action.Action.Name != conversation.ActionApprove || in.Action.MessageTS != ts {
			t.Errorf("input after the malformed payloads: %+v", in)
		}
	})
}

func TestInteractionFailures(t *testing.T) {
	h := startBot(t)
	key, ts := h.thread(t, func(k conversation.Key) conversation.Card { return inThread(artifactCard(budgetText), k) })

	t.Run("ModalNotOpened", func(t *testing.T) {
		h.emu.FailNext("views.open", "expired_trigger_id")
		if _, err := h.emu.ClickButtonByLabel("C0GENERAL", ts, "U0BOB", "Request changes"); err != nil {
			t.Fatal(err)
		}
		eph := waitEphemeral(t, h, "U0BOB", 1)
		if !strings.Contains(eph[0].Text, "could not be opened") || eph[0].ThreadTS != key.ThreadTS {
			t.Errorf("ephemeral %+v", eph[0])
		}
	})
	t.Run("SubmitFailed", func(t *testing.T) {
		h.rec.mu.Lock()
		h.rec.fail = func(in conversation.Input) error {
			if in.Kind == conversation.KindCommand {
				return conversation.ErrClosed
			}
			return errors.New("database down")
		}
		h.rec.mu.Unlock()
		if _, err := h.emu.ClickButtonByLabel("C0GENERAL", ts, "U0BOB", "Approve"); err != nil {
			t.Fatal(err)
		}
		eph := waitEphemeral(t, h, "U0BOB", 2)
		if !strings.Contains(eph[1].Text, "could not take that") || eph[1].ThreadTS != key.ThreadTS {
			t.Errorf("ephemeral %+v", eph[1])
		}
		if _, err := h.emu.SlashCommand("C0GENERAL", "U0ALICE", "/threadwright", "status"); err != nil {
			t.Fatal(err)
		}
		eph = waitEphemeral(t, h, "U0ALICE", 1)
		if !strings.Contains(eph[0].Text, "restarting") || eph[0].ThreadTS != "" {
			t.Errorf("ephemeral %+v", eph[0])
		}
	})
}

func waitEphemeral(t *testing.T, h *harness, user string, n int) []emulator.Message {
	t.Helper()
	var eph []emulator.Message
	err := h.emu.WaitFor(testContext(t), func() bool {
		eph = h.emu.Ephemerals("C0GENERAL", user)
		return len(eph) >= n
	})
	if err != nil {
		t.Fatalf("waiting for %d ephemerals for %s, have %+v", n, user, eph)
	}
	return eph
}

func TestMessengerCards(t *testing.T) {
	h := startBot(t)
	ctx := testContext(t)
	parent, err := h.emu.PostUserMessage("C0GENERAL", "U0ALICE", "<@U0BOT> start proposal", "")
	if err != nil {
		t.Fatal(err)
	}
	key := conversation.Key{TeamID: "T0TEAM", ChannelID: "C0GENERAL", ThreadTS: parent}
	h.next(t) // the mention

	t.Run("PostCard", func(t *testing.T) {
		for name, c := range map[string]conversation.Card{"options": optionsCard(), "artifact": artifactCard(budgetText), "stale": staleCard(), "russian": russianCard()} {
			ts, err := h.msg.PostCard(ctx, key, inThread(c, key), conversation.Tag{})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			m, ok := h.emu.Message("C0GENERAL", ts)
			if !ok || m.ThreadTS != parent || m.Blocks == nil || m.Text != c.Text {
				t.Errorf("%s: message %+v", name, m)
			}
		}
	})
	t.Run("LongArtifact", func(t *testing.T) {
		before := len(h.emu.BotMessages("C0GENERAL", parent))
		ts, err := h.msg.PostCard(ctx, key, inThread(artifactCard(longText(30000)), key), conversation.Tag{})
		if err != nil {
			t.Fatal(err)
		}
		msgs := h.emu.BotMessages("C0GENERAL", parent)[before:]
		if len(msgs) != 3 || msgs[2].TS != ts {
			t.Fatalf("%d messages, last %s, want 3 ending with %s", len(msgs), msgs[len(msgs)-1].TS, ts)
		}
		if _, err := h.emu.ClickButtonByLabel("C0GENERAL", ts, "U0BOB", "Approve"); err != nil {
			t.Errorf("the last message lacks the buttons: %v", err)
		} else if in := h.next(t); in.Action.MessageTS != ts {
			t.Errorf("input %+v", in.Action)
		}

		t.Run("UpdateCard", func(t *testing.T) {
			c := inThread(artifactCard(longText(30000)), key)
			c.Blocks[4] = conversation.Block{Kind: conversation.BlockContext, Text: "Approved by <@U0BOB>"}
			if err := h.msg.UpdateCard(ctx, key, ts, c); err != nil {
				t.Fatal(err)
			}
			m, _ := h.emu.Message("C0GENERAL", ts)
			if !m.Edited || !strings.Contains(string(m.Blocks), "Approved by") || !strings.Contains(string(m.Blocks), "Shortened to fit Slack") {
				t.Errorf("updated message %+v", m)
			}
		})
	})
	t.Run("TopLevel", func(t *testing.T) {
		ts, err := h.msg.PostCard(ctx, conversation.Key{TeamID: "T0TEAM", ChannelID: "C0RANDOM"}, artifactCard(longText(30000)), conversation.Tag{})
		if err != nil {
			t.Fatal(err)
		}
		msgs := h.emu.BotMessages("C0RANDOM", "")
		if len(msgs) != 1 || msgs[0].TS != ts || msgs[0].ThreadTS != "" {
			t.Errorf("top-level messages %+v", msgs)
		}
	})
	t.Run("Ephemeral", func(t *testing.T) {
		if err := h.msg.PostEphemeral(ctx, key, "U0BOB", "This button is no longer current."); err != nil {
			t.Fatal(err)
		}
		menu := conversation.Card{Text: "Which workflow?", Blocks: []conversation.Block{
			{Kind: conversation.BlockSection, Text: "You run two workflows here. Which one?"},
			{Kind: conversation.BlockActions, Buttons: []conversation.Button{
				{Label: "Proposal", Action: conversation.Action{Name: conversation.ActionCommand, Channel: "C0GENERAL", ThreadTS: parent, Arg: "restart budget"}},
			}},
		}}
		channelKey := conversation.Key{TeamID: "T0TEAM", ChannelID: "C0GENERAL"}
		if err := h.msg.PostEphemeralCard(ctx, channelKey, "U0BOB", menu); err != nil {
			t.Fatal(err)
		}
		eph := h.emu.Ephemerals("C0GENERAL", "U0BOB")
		if len(eph) != 2 || eph[0].ThreadTS != parent || eph[0].Blocks != nil || eph[1].ThreadTS != "" || eph[1].Blocks == nil || eph[1].Text != "Which workflow?" {
			t.Fatalf("ephemerals %+v", eph)
		}
		if _, err := h.emu.ClickButtonByLabel("C0GENERAL", eph[1].TS, "U0BOB", "Proposal"); err != nil {
			t.Fatal(err)
		}
		in := h.next(t)
		if in.Key != key || in.Action.Action.Name != conversation.ActionCommand || in.Action.Action.Arg != "restart budget" || in.Action.MessageTS != eph[1].TS {
			t.Errorf("input %+v %+v", in, in.Action)
		}
	})
	t.Run("Upload", func(t *testing.T) {
		report := "# Product brief\n\n" + strings.Repeat("Text of the brief. ", 500)
		err := h.msg.Upload(ctx, key, conversation.File{Name: "product-brief.md", Title: "Product brief", Content: []byte(report), Comment: "The report is ready."}, conversation.Tag{})
		if err != nil {
			t.Fatal(err)
		}
		files := h.emu.Files()
		if len(files) != 1 || string(files[0].Content) != report || files[0].Channel != "C0GENERAL" || files[0].ThreadTS != parent ||
			files[0].Title != "Product brief" || !files[0].Complete {
			t.Fatalf("files %+v", files)
		}
		msgs := h.emu.BotMessages("C0GENERAL", parent)
		last := msgs[len(msgs)-1]
		if last.Subtype != "file_share" || last.Text != "The report is ready." || len(last.Files) != 1 {
			t.Errorf("file message %+v", last)
		}
		if err := h.msg.Upload(ctx, key, conversation.File{Name: "empty.md"}, conversation.Tag{}); err == nil {
			t.Error("an empty file uploaded")
		}
	})
	t.Run("UserLocale", func(t *testing.T) {
		h.emu.AddUser(emulator.User{ID: "U0IVAN", Name: "ivan", Locale: "ru-RU"})
		for user, want := range map[string]string{"U0IVAN": "ru-RU", "U0ALICE": "en-US"} {
			if got, err := h.msg.UserLocale(ctx, user); err != nil || got != want {
				t.Errorf("UserLocale(%s) = %q, %v; want %q", user, got, err, want)
			}
		}
		if _, err := h.msg.UserLocale(ctx, "U0NOBODY"); err == nil {
			t.Error("no error for an unknown user")
		}
	})
}
