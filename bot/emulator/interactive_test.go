package emulator_test

import (
	"errors"
	"testing"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/threadwright/threadwright/bot/emulator"
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
