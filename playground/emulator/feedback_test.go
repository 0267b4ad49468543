package emulator_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/threadwright/threadwright/playground/emulator"
)

const feedbackBlocks = `[{"type":"section","text":{"type":"mrkdwn","text":"Paris."}},
 {"type":"context_actions","block_id":"fb","elements":[{"type":"feedback_buttons","action_id":"feedback",
  "positive_button":{"text":{"type":"plain_text","text":"Good"},"value":"up","accessibility_label":"Helpful"},
  "negative_button":{"text":{"type":"plain_text","text":"Bad"},"value":"down"}}]}]`

// TestFeedbackButtons: the emulator refuses feedback buttons Slack refuses, and a
// click (ClickFeedback, or the playground's /ui/click) sends a block_actions payload
// whose action is the feedback_buttons element's, with the clicked button's value.
func TestFeedbackButtons(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	parent, _ := emu.PostUserMessage("C0GENERAL", "U0ALICE", "capital of France?", "")

	t.Run("Refused", func(t *testing.T) {
		text := slack.NewTextBlockObject(slack.PlainTextType, "Good", false, false)
		for name, el := range map[string]*slack.FeedbackButtonsBlockElement{
			"NoNegative": slack.NewFeedbackButtonsBlockElement("f", slack.NewFeedbackButton(text, "up"), nil),
			"NoValue":    slack.NewFeedbackButtonsBlockElement("f", slack.NewFeedbackButton(text, "up"), slack.NewFeedbackButton(text, "")),
			"LongLabel": slack.NewFeedbackButtonsBlockElement("f", slack.NewFeedbackButton(text, "up"),
				slack.NewFeedbackButton(text, "down").WithAccessibilityLabel(strings.Repeat("x", 76))),
		} {
			_, _, err := NewAPI(emu).PostMessage("C0GENERAL", slack.MsgOptionTS(parent), slack.MsgOptionText("x", false),
				slack.MsgOptionBlocks(slack.NewContextActionsBlock("", el)))
			if err == nil || !strings.Contains(err.Error(), "invalid_blocks") {
				t.Errorf("%s: err %v; want invalid_blocks", name, err)
			}
		}
	})

	ts := postBlocks(t, emu, "C0GENERAL", parent, feedbackBlocks)
	if !emu.HasFeedbackButtons("C0GENERAL", ts, "U0BOB") {
		t.Fatal("HasFeedbackButtons = false")
	}
	check := func(t *testing.T, envelopeID, value string) {
		t.Helper()
		p := envelopePayload(t, emu, envelopeID)
		a := p["actions"].([]any)[0].(map[string]any)
		if p["type"] != "block_actions" || a["type"] != "feedback_buttons" || a["action_id"] != "feedback" || a["block_id"] != "fb" || a["value"] != value {
			t.Errorf("payload %v; want the feedback_buttons action with value %q", p, value)
		}
		if p["trigger_id"] == "" || p["container"].(map[string]any)["message_ts"] != ts {
			t.Errorf("payload %v lacks the trigger or the message", p)
		}
	}
	t.Run("ClickFeedback", func(t *testing.T) {
		id, err := emu.ClickFeedback("C0GENERAL", ts, "U0BOB", true)
		if err != nil {
			t.Fatal(err)
		}
		check(t, id, "up")
		if _, err := emu.ClickFeedback("C0GENERAL", parent, "U0BOB", true); !errors.Is(err, emulator.ErrActionNotFound) {
			t.Errorf("a message without feedback buttons: err %v", err)
		}
	})
	t.Run("Playground", func(t *testing.T) {
		out := mustPage(t, emu, "/ui/click", map[string]string{"user": "U0BOB", "channel": "C0GENERAL", "ts": ts, "action_id": "feedback", "value": "down"})
		check(t, out["envelope_id"].(string), "down")
	})
}
