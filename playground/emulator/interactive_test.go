package emulator_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/threadwright/threadwright/playground/emulator"
)

func TestClickButton(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	bot := StartBot(t, emu)
	ctx := testContext(t)
	bot.Next(t, ctx, socketmode.EventTypeHello)

	parent, _ := emu.PostUserMessage("C0GENERAL", "U0ALICE", "options please", "")
	_, ts, err := bot.API.PostMessage("C0GENERAL", slack.MsgOptionTS(parent), slack.MsgOptionText("Pick one", false), slack.MsgOptionBlocks(
		slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, "*Options*", false, false), nil,
			slack.NewAccessory(slack.NewButtonBlockElement("regenerate", "regen:v3", slack.NewTextBlockObject(slack.PlainTextType, "Regenerate", false, false)))),
		slack.NewActionBlock("choices",
			slack.NewButtonBlockElement("pick_a", "conv1:a:v3", slack.NewTextBlockObject(slack.PlainTextType, "A", false, false)),
			slack.NewButtonBlockElement("pick_b", "conv1:b:v3", slack.NewTextBlockObject(slack.PlainTextType, "B", false, false)).WithStyle(slack.StylePrimary),
		),
	))
	if err != nil {
		t.Fatal(err)
	}

	if _, err := emu.ClickButton("C0GENERAL", ts, "U0BOB", "pick_z"); !errors.Is(err, emulator.ErrActionNotFound) {
		t.Errorf("clicking a missing button: %v", err)
	}
	id, err := emu.ClickButton("C0GENERAL", ts, "U0BOB", "pick_b")
	if err != nil {
		t.Fatal(err)
	}
	evt := bot.Next(t, ctx, socketmode.EventTypeInteractive)
	bot.MustAck(t, evt.Request)
	cb := evt.Data.(slack.InteractionCallback)
	if evt.Request.EnvelopeID != id || cb.Type != slack.InteractionTypeBlockActions || cb.User.ID != "U0BOB" ||
		cb.Channel.ID != "C0GENERAL" || cb.Container.MessageTs != ts || cb.Container.ThreadTs != parent ||
		cb.Message.Timestamp != ts || cb.TriggerID == "" || cb.ResponseURL == "" {
		t.Errorf("callback = %+v", cb)
	}
	actions := cb.ActionCallback.BlockActions
	if len(actions) != 1 || actions[0].ActionID != "pick_b" || actions[0].Value != "conv1:b:v3" || actions[0].BlockID != "choices" {
		t.Errorf("actions = %+v", actions)
	}

	t.Run("Accessory", func(t *testing.T) {
		if _, err := emu.ClickButton("C0GENERAL", ts, "U0BOB", "regenerate"); err != nil {
			t.Fatal(err)
		}
		evt := bot.Next(t, ctx, socketmode.EventTypeInteractive)
		bot.MustAck(t, evt.Request)
		if v := evt.Data.(slack.InteractionCallback).ActionCallback.BlockActions[0].Value; v != "regen:v3" {
			t.Errorf("value = %q", v)
		}
	})
	t.Run("ResponseURLReplace", func(t *testing.T) {
		_, _, err := bot.API.PostMessage("", slack.MsgOptionReplaceOriginal(cb.ResponseURL), slack.MsgOptionText("You picked B", false))
		if err != nil {
			t.Fatal(err)
		}
		if m, _ := emu.Message("C0GENERAL", ts); m.Text != "You picked B" || m.Blocks != nil || !m.Edited {
			t.Errorf("replaced message = %+v", m)
		}
	})
	t.Run("ResponseURLEphemeral", func(t *testing.T) {
		_, _, err := bot.API.PostMessage("", slack.MsgOptionResponseURL(cb.ResponseURL, slack.ResponseTypeEphemeral), slack.MsgOptionText("no longer current", false))
		if err != nil {
			t.Fatal(err)
		}
		got := emu.Ephemerals("C0GENERAL", "U0BOB")
		if len(got) != 1 || got[0].Text != "no longer current" || got[0].ThreadTS != parent {
			t.Errorf("ephemerals = %+v", got)
		}
	})
	t.Run("OpenAndSubmitView", func(t *testing.T) {
		view := slack.ModalViewRequest{
			Type:       slack.VTModal,
			CallbackID: "guidance",
			Title:      slack.NewTextBlockObject(slack.PlainTextType, "Guidance", false, false),
			Submit:     slack.NewTextBlockObject(slack.PlainTextType, "Regenerate", false, false),
			Blocks: slack.Blocks{BlockSet: []slack.Block{slack.NewInputBlock("guidance",
				slack.NewTextBlockObject(slack.PlainTextType, "What should change?", false, false), nil,
				slack.NewPlainTextInputBlockElement(nil, "input"))}},
		}
		resp, err := bot.API.OpenView(cb.TriggerID, view)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := bot.API.OpenView(cb.TriggerID, view); err == nil {
			t.Error("a trigger_id opened two views")
		}
		views := emu.Views()
		if len(views) != 1 || views[0].ID != resp.ID || views[0].User != "U0BOB" || !views[0].Open {
			t.Fatalf("views = %+v", views)
		}

		values := map[string]any{"guidance": map[string]any{"input": map[string]any{"type": "plain_text_input", "value": "shorter"}}}
		if _, err := emu.SubmitView(resp.ID, "U0BOB", values); err != nil {
			t.Fatal(err)
		}
		evt := bot.Next(t, ctx, socketmode.EventTypeInteractive)
		sub := evt.Data.(slack.InteractionCallback)
		if sub.Type != slack.InteractionTypeViewSubmission || sub.View.CallbackID != "guidance" ||
			sub.View.State.Values["guidance"]["input"].Value != "shorter" || !evt.Request.AcceptsResponsePayload {
			t.Errorf("view_submission = %+v", sub.View)
		}
		bot.MustAck(t, evt.Request, slack.NewErrorsViewSubmissionResponse(map[string]string{"guidance": "say more"}))
		WaitAcksFor(t, emu, evt.Request.EnvelopeID)
		if !emu.Views()[0].Open {
			t.Error("a view answered with errors closed")
		}

		if _, err := emu.SubmitView(resp.ID, "U0BOB", values); err != nil {
			t.Fatal(err)
		}
		evt = bot.Next(t, ctx, socketmode.EventTypeInteractive)
		bot.MustAck(t, evt.Request)
		WaitAcksFor(t, emu, evt.Request.EnvelopeID)
		if emu.Views()[0].Open {
			t.Error("a view acked without errors stayed open")
		}
		if _, err := emu.SubmitView(resp.ID, "U0BOB", values); !errors.Is(err, emulator.ErrViewNotFound) {
			t.Errorf("submitting a closed view: %v", err)
		}
	})
}

// WaitAcksFor waits until the envelope is acknowledged.
func WaitAcksFor(tb testing.TB, emu *emulator.Server, envelopeID string) {
	tb.Helper()
	err := emu.WaitFor(testContext(tb), func() bool {
		env, _ := emu.Envelope(envelopeID)
		return env.Acked
	})
	if err != nil {
		tb.Fatalf("envelope %s not acked: %v", envelopeID, err)
	}
}

func TestSlashCommand(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	bot := StartBot(t, emu)
	ctx := testContext(t)
	bot.Next(t, ctx, socketmode.EventTypeHello)

	if _, err := emu.SlashCommand("C0GENERAL", "U0ALICE", "/threadwright", "status"); err != nil {
		t.Fatal(err)
	}
	evt := bot.Next(t, ctx, socketmode.EventTypeSlashCommand)
	cmd := evt.Data.(slack.SlashCommand)
	if cmd.Command != "/threadwright" || cmd.Text != "status" || cmd.UserID != "U0ALICE" || cmd.ChannelID != "C0GENERAL" ||
		cmd.ResponseURL == "" || cmd.TriggerID == "" || !evt.Request.AcceptsResponsePayload {
		t.Errorf("slash command = %+v", cmd)
	}
	bot.MustAck(t, evt.Request, map[string]any{"text": "No workflow running here."})
	WaitAcksFor(t, emu, evt.Request.EnvelopeID)
	got := emu.Ephemerals("C0GENERAL", "U0ALICE")
	if len(got) != 1 || got[0].Text != "No workflow running here." {
		t.Errorf("ephemerals = %+v", got)
	}

	t.Run("InChannelResponse", func(t *testing.T) {
		_, _, err := bot.API.PostMessage("", slack.MsgOptionResponseURL(cmd.ResponseURL, slack.ResponseTypeInChannel), slack.MsgOptionText("Started.", false))
		if err != nil {
			t.Fatal(err)
		}
		if msgs := emu.BotMessages("C0GENERAL", ""); len(msgs) != 1 || msgs[0].Text != "Started." {
			t.Errorf("channel messages = %+v", msgs)
		}
	})
}

// postCard posts a message with two buttons with the same label in two blocks, an
// overflow menu and a static select, as the bot, in a thread of #general.
func postCard(t *testing.T, api *slack.Client, threadTS string) string {
	t.Helper()
	text := func(s string) *slack.TextBlockObject {
		return slack.NewTextBlockObject(slack.PlainTextType, s, true, false)
	}
	opt := func(label, value string) *slack.OptionBlockObject {
		return slack.NewOptionBlockObject(value, text(label), nil)
	}
	_, ts, err := api.PostMessage("C0GENERAL", slack.MsgOptionTS(threadTS), slack.MsgOptionText("stale", false), slack.MsgOptionBlocks(
		slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, "*Budget* is stale", false, false), nil, nil),
		slack.NewActionBlock("", slack.NewButtonBlockElement("tw:1:0", "keep-budget", text("Keep")),
			slack.NewButtonBlockElement("tw:1:1", "regen-budget", text("Regenerate with guidance")).WithStyle(slack.StylePrimary)),
		slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, "*Timeline* is stale", false, false), nil, nil),
		slack.NewActionBlock("", slack.NewButtonBlockElement("tw:3:0", "keep-timeline", text("Keep")),
			slack.NewOverflowBlockElement("tw:3:menu", opt("Restart", "restart-v"), opt("Edit…", "edit-v"))),
		slack.NewActionBlock("picker", slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, text("Choose"), "tw:4:menu",
			opt("Proposal", "wf-proposal"), opt("Brief", "wf-brief"))),
	))
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

func TestClickButtonByLabel(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	bot := StartBot(t, emu)
	ctx := testContext(t)
	bot.Next(t, ctx, socketmode.EventTypeHello)
	parent, _ := emu.PostUserMessage("C0GENERAL", "U0ALICE", "<@U0BOT> start proposal", "")
	ts := postCard(t, bot.API, parent)

	id, err := emu.ClickButtonByLabel("C0GENERAL", ts, "U0BOB", " Regenerate with guidance ")
	if err != nil {
		t.Fatal(err)
	}
	evt := bot.Next(t, ctx, socketmode.EventTypeInteractive)
	bot.MustAck(t, evt.Request)
	cb := evt.Data.(slack.InteractionCallback)
	a := cb.ActionCallback.BlockActions
	if evt.Request.EnvelopeID != id || len(a) != 1 || a[0].ActionID != "tw:1:1" || a[0].Value != "regen-budget" || a[0].BlockID != "block1" ||
		a[0].Type != "button" || cb.Container.MessageTs != ts || cb.Message.Timestamp != ts {
		t.Errorf("callback %+v, actions %+v", cb, a)
	}

	_, err = emu.ClickButtonByLabel("C0GENERAL", ts, "U0BOB", "Approve")
	if !errors.Is(err, emulator.ErrActionNotFound) || !strings.Contains(err.Error(), `"Keep", "Regenerate with guidance", "Keep"`) {
		t.Errorf("a missing label: %v", err)
	}
	_, err = emu.ClickButtonByLabel("C0GENERAL", ts, "U0BOB", "Keep")
	if !errors.Is(err, emulator.ErrAmbiguousLabel) || !strings.Contains(err.Error(), "tw:1:0, tw:3:0") {
		t.Errorf("an ambiguous label: %v", err)
	}

	t.Run("Buttons", func(t *testing.T) {
		buttons, err := emu.Buttons("C0GENERAL", ts, "U0BOB")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, b := range buttons {
			got = append(got, b.Type+" "+b.Label+" "+b.ActionID+" "+b.Value+" | "+b.Context)
		}
		want := []string{
			"button Keep tw:1:0 keep-budget | *Budget* is stale",
			"button Regenerate with guidance tw:1:1 regen-budget | *Budget* is stale",
			"button Keep tw:3:0 keep-timeline | *Timeline* is stale",
			"overflow Restart tw:3:menu restart-v | *Timeline* is stale",
			"overflow Edit… tw:3:menu edit-v | *Timeline* is stale",
			"static_select Proposal tw:4:menu wf-proposal | *Timeline* is stale",
			"static_select Brief tw:4:menu wf-brief | *Timeline* is stale",
		}
		if !slices.Equal(got, want) {
			t.Errorf("buttons:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

func TestChooseMenuItem(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	bot := StartBot(t, emu)
	ctx := testContext(t)
	bot.Next(t, ctx, socketmode.EventTypeHello)
	parent, _ := emu.PostUserMessage("C0GENERAL", "U0ALICE", "<@U0BOT> start proposal", "")
	ts := postCard(t, bot.API, parent)

	t.Run("Overflow", func(t *testing.T) {
		if _, err := emu.ChooseMenuItem("C0GENERAL", ts, "U0ALICE", "Edit…"); err != nil {
			t.Fatal(err)
		}
		evt := bot.Next(t, ctx, socketmode.EventTypeInteractive)
		bot.MustAck(t, evt.Request)
		a := evt.Data.(slack.InteractionCallback).ActionCallback.BlockActions
		if len(a) != 1 || a[0].Type != "overflow" || a[0].ActionID != "tw:3:menu" || a[0].SelectedOption.Value != "edit-v" ||
			a[0].SelectedOption.Text.Text != "Edit…" || a[0].BlockID != "block3" || a[0].ActionTs == "" {
			t.Errorf("actions %+v", a)
		}
		// The sample's message blocks show no overflow options; the message is
		// the bot's own, checked by TestInteractiveFixtures.
		env, _ := emu.Envelope(evt.Request.EnvelopeID)
		got := asMap(t, env.Payload)
		delete(got, "message")
		sample := readFixture(t, filepath.Join("interactive", "BlockActionPayload.json"))
		checkShape(t, got, merge(sample, map[string]any{"state": map[string]any{"values": map[string]any{}}}))
	})
	t.Run("StaticSelect", func(t *testing.T) {
		if _, err := emu.ChooseMenuItem("C0GENERAL", ts, "U0ALICE", "Brief"); err != nil {
			t.Fatal(err)
		}
		evt := bot.Next(t, ctx, socketmode.EventTypeInteractive)
		bot.MustAck(t, evt.Request)
		cb := evt.Data.(slack.InteractionCallback)
		a := cb.ActionCallback.BlockActions
		if len(a) != 1 || a[0].Type != "static_select" || a[0].SelectedOption.Value != "wf-brief" || a[0].BlockID != "picker" {
			t.Errorf("actions %+v", a)
		}
		var state struct {
			Values map[string]map[string]slack.BlockAction `json:"values"`
		}
		if err := json.Unmarshal(cb.RawState, &state); err != nil || state.Values["picker"]["tw:4:menu"].SelectedOption.Value != "wf-brief" {
			t.Errorf("state %s (%v)", cb.RawState, err)
		}
	})
	t.Run("Missing", func(t *testing.T) {
		_, err := emu.ChooseMenuItem("C0GENERAL", ts, "U0ALICE", "Export")
		if !errors.Is(err, emulator.ErrActionNotFound) || !strings.Contains(err.Error(), `"Restart", "Edit…", "Proposal", "Brief"`) {
			t.Errorf("a missing item: %v", err)
		}
	})
}

func TestSubmitModal(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	bot := StartBot(t, emu)
	ctx := testContext(t)
	bot.Next(t, ctx, socketmode.EventTypeHello)
	parent, _ := emu.PostUserMessage("C0GENERAL", "U0ALICE", "<@U0BOT> start proposal", "")
	ts := postCard(t, bot.API, parent)

	if _, err := emu.SubmitModal("U0BOB", "anything"); !errors.Is(err, emulator.ErrViewNotFound) {
		t.Errorf("submitting without a view: %v", err)
	}
	if _, err := emu.ClickButtonByLabel("C0GENERAL", ts, "U0BOB", "Regenerate with guidance"); err != nil {
		t.Fatal(err)
	}
	evt := bot.Next(t, ctx, socketmode.EventTypeInteractive)
	bot.MustAck(t, evt.Request)
	cb := evt.Data.(slack.InteractionCallback)
	modal := func(title string, inputs int) slack.ModalViewRequest {
		var blocks []slack.Block
		for i := range inputs {
			blocks = append(blocks, slack.NewInputBlock(fmt.Sprintf("tw_text%d", i), slack.NewTextBlockObject(slack.PlainTextType, "Guidance", false, false), nil,
				slack.NewPlainTextInputBlockElement(nil, "text")))
		}
		return slack.ModalViewRequest{Type: slack.VTModal, CallbackID: "tw_modal", PrivateMetadata: "meta",
			Title:  slack.NewTextBlockObject(slack.PlainTextType, title, false, false),
			Submit: slack.NewTextBlockObject(slack.PlainTextType, "Regenerate", false, false),
			Blocks: slack.Blocks{BlockSet: blocks}}
	}
	if _, err := bot.API.OpenView(cb.TriggerID, modal("Regenerate budget", 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := emu.SubmitModal("U0ALICE", "x"); !errors.Is(err, emulator.ErrViewNotFound) {
		t.Errorf("alice submitted bob's view: %v", err)
	}
	id, err := emu.SubmitModal("U0BOB", "Use 2024 prices.\nKeep it short.")
	if err != nil {
		t.Fatal(err)
	}
	evt = bot.Next(t, ctx, socketmode.EventTypeInteractive)
	bot.MustAck(t, evt.Request)
	sub := evt.Data.(slack.InteractionCallback)
	if evt.Request.EnvelopeID != id || sub.Type != slack.InteractionTypeViewSubmission || sub.View.CallbackID != "tw_modal" || sub.View.PrivateMetadata != "meta" ||
		sub.View.State.Values["tw_text0"]["text"].Value != "Use 2024 prices.\nKeep it short." || sub.User.ID != "U0BOB" || sub.TriggerID == "" {
		t.Errorf("view_submission %+v", sub.View)
	}
	// The sample lacks response_urls, view.blocks and the (keyed by block_id)
	// state values that Slack sends with a submission.
	env, _ := emu.Envelope(id)
	got := asMap(t, env.Payload)
	view := got["view"].(map[string]any)
	delete(view, "blocks")
	delete(view["state"].(map[string]any), "values")
	sample := readFixture(t, filepath.Join("interactive", "ViewSubmissionPayload.json"))
	checkShape(t, got, merge(sample, map[string]any{"response_urls": []any{}}))
	WaitAcksFor(t, emu, id)
	if emu.Views()[0].Open {
		t.Error("the view stayed open after an empty ack")
	}

	t.Run("TwoInputs", func(t *testing.T) {
		if _, err := emu.ClickButtonByLabel("C0GENERAL", ts, "U0BOB", "Regenerate with guidance"); err != nil {
			t.Fatal(err)
		}
		evt := bot.Next(t, ctx, socketmode.EventTypeInteractive)
		bot.MustAck(t, evt.Request)
		if _, err := bot.API.OpenView(evt.Data.(slack.InteractionCallback).TriggerID, modal("Two", 2)); err != nil {
			t.Fatal(err)
		}
		if _, err := emu.SubmitModal("U0BOB", "x"); err == nil || !strings.Contains(err.Error(), "2 text inputs") {
			t.Errorf("a view with two inputs: %v", err)
		}
	})
	t.Run("ViewLimits", func(t *testing.T) {
		if _, err := emu.ClickButtonByLabel("C0GENERAL", ts, "U0BOB", "Regenerate with guidance"); err != nil {
			t.Fatal(err)
		}
		evt := bot.Next(t, ctx, socketmode.EventTypeInteractive)
		bot.MustAck(t, evt.Request)
		_, err := bot.API.OpenView(evt.Data.(slack.InteractionCallback).TriggerID, modal("A title longer than 24 characters", 1))
		var se slack.SlackErrorResponse
		if !errors.As(err, &se) || se.Err != "invalid_arguments" || !strings.Contains(strings.Join(se.ResponseMetadata.Messages, " "), "/view/title/text") {
			t.Errorf("a long title: %v %+v", err, se)
		}
	})
}

func TestEphemeralCard(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	bot := StartBot(t, emu)
	ctx := testContext(t)
	bot.Next(t, ctx, socketmode.EventTypeHello)
	parent, _ := emu.PostUserMessage("C0GENERAL", "U0ALICE", "<@U0BOT> start proposal", "")

	ts, err := bot.API.PostEphemeral("C0GENERAL", "U0ALICE", slack.MsgOptionTS(parent), slack.MsgOptionText("Which workflow?", false), slack.MsgOptionBlocks(
		slack.NewActionBlock("", slack.NewButtonBlockElement("tw:0:0", "wf-1", slack.NewTextBlockObject(slack.PlainTextType, "Proposal (#general)", false, false))),
	))
	if err != nil {
		t.Fatal(err)
	}
	eph := emu.Ephemerals("C0GENERAL", "U0ALICE")
	if len(eph) != 1 || eph[0].TS != ts || eph[0].Blocks == nil || eph[0].ThreadTS != parent {
		t.Fatalf("ephemerals %+v", eph)
	}
	if _, err := emu.ClickButtonByLabel("C0GENERAL", ts, "U0BOB", "Proposal (#general)"); !errors.Is(err, emulator.ErrMessageNotFound) {
		t.Errorf("bob clicked alice's ephemeral message: %v", err)
	}
	if _, err := emu.ClickButtonByLabel("C0GENERAL", ts, "U0ALICE", "Proposal (#general)"); err != nil {
		t.Fatal(err)
	}
	evt := bot.Next(t, ctx, socketmode.EventTypeInteractive)
	bot.MustAck(t, evt.Request)
	cb := evt.Data.(slack.InteractionCallback)
	if !cb.Container.IsEphemeral || cb.Container.MessageTs != ts || cb.Container.ThreadTs != parent || cb.Message.Timestamp != "" ||
		cb.ActionCallback.BlockActions[0].Value != "wf-1" {
		t.Errorf("callback container %+v, message ts %q", cb.Container, cb.Message.Timestamp)
	}
}

// TestClickOld clicks a button that a chat.update has since removed: the envelope
// still carries the button's old value, as Slack delivers a double click.
func TestClickOld(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	bot := StartBot(t, emu)
	ctx := testContext(t)
	bot.Next(t, ctx, socketmode.EventTypeHello)

	_, ts, err := bot.API.PostMessage("C0GENERAL", slack.MsgOptionText("Pick", false), slack.MsgOptionBlocks(
		slack.NewActionBlock("choices", slack.NewButtonBlockElement("pick_a", "rev1:a", slack.NewTextBlockObject(slack.PlainTextType, "A", false, false))),
	))
	if err != nil {
		t.Fatal(err)
	}
	buttons, err := emu.Buttons("C0GENERAL", ts, "U0BOB")
	if err != nil || len(buttons) != 1 {
		t.Fatalf("buttons %+v, %v", buttons, err)
	}
	if _, _, _, err := bot.API.UpdateMessage("C0GENERAL", ts, slack.MsgOptionText("Chosen: A", false), slack.MsgOptionBlocks()); err != nil {
		t.Fatal(err)
	}
	if _, err := emu.ClickButton("C0GENERAL", ts, "U0BOB", "pick_a"); !errors.Is(err, emulator.ErrActionNotFound) {
		t.Fatalf("the removed button is still clickable: %v", err)
	}
	id, err := emu.ClickOld("C0GENERAL", ts, "U0BOB", buttons[0])
	if err != nil {
		t.Fatal(err)
	}
	for {
		evt := bot.Next(t, ctx, socketmode.EventTypeInteractive)
		bot.MustAck(t, evt.Request)
		if evt.Request.EnvelopeID != id {
			continue
		}
		actions := evt.Data.(slack.InteractionCallback).ActionCallback.BlockActions
		if len(actions) != 1 || actions[0].ActionID != "pick_a" || actions[0].Value != "rev1:a" {
			t.Fatalf("actions = %+v", actions)
		}
		return
	}
}
