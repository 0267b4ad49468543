package bot

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/threadwright/threadwright/conversation"
)

// readSample reads a sample of Slack's wire format kept in testdata (its "sample",
// with its "source" beside it).
func readSample(t *testing.T, name string) json.RawMessage {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Source string          `json:"source"`
		Sample json.RawMessage `json:"sample"`
	}
	if err := json.Unmarshal(data, &f); err != nil || f.Source == "" || len(f.Sample) == 0 {
		t.Fatalf("%s: want {source, sample}: %v", name, err)
	}
	return f.Sample
}

// shape lists the JSON paths of v's object keys ("elements[].positive_button.text.type"),
// and the values at the paths named "type". A plain_text object's optional "emoji"
// (https://docs.slack.dev/reference/block-kit/composition-objects/text-object), which
// slack-go always writes and Slack's samples leave out, is not counted.
func shape(v any, at string, out map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k == "emoji" && x["type"] == "plain_text" {
				continue
			}
			p := at + "." + k
			out[p] = ""
			if s, ok := e.(string); ok && k == "type" {
				out[p] = s
			}
			shape(e, p, out)
		}
	case []any:
		for _, e := range x {
			shape(e, at+"[]", out)
		}
	}
}

func shapeOf(t *testing.T, raw []byte) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	shape(v, "", m)
	var out []string
	for k, typ := range m {
		out = append(out, k+"="+typ)
	}
	sort.Strings(out)
	return out
}

var answerKey = conversation.Key{TeamID: "T0", ChannelID: "C1", ThreadTS: "1700000000.000100"}

// TestFeedbackBlockWireFormat: the feedback block has the shape of Slack's sample
// (the same fields at the same places, the same types), and each button's value is
// the signed feedback action of its rating.
func TestFeedbackBlockWireFormat(t *testing.T) {
	b, err := testSigner.feedbackBlock(answerKey)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	sample := readSample(t, "feedback_block.json")
	if g, w := shapeOf(t, got), shapeOf(t, sample); !reflect.DeepEqual(g, w) {
		t.Fatalf("feedback block %s\nhas the shape %q\nwant Slack's %q", got, g, w)
	}
	// The sample reads back into slack-go's types, as ours does.
	var blocks slack.Blocks
	if err := json.Unmarshal([]byte("["+string(sample)+"]"), &blocks); err != nil || len(blocks.BlockSet) != 1 || blocks.BlockSet[0].BlockType() != slack.MBTContextActions {
		t.Fatalf("sample read by slack-go: %+v, %v", blocks.BlockSet, err)
	}
	el := b.Elements.ElementSet[0].(*slack.FeedbackButtonsBlockElement)
	if el.ActionID != FeedbackActionID {
		t.Errorf("action_id %q; want %q", el.ActionID, FeedbackActionID)
	}
	for rating, btn := range map[conversation.Rating]*slack.FeedbackButton{conversation.RatingPositive: el.PositiveButton, conversation.RatingNegative: el.NegativeButton} {
		if btn.Text.Text == "" || utf8.RuneCountInString(btn.AccessibilityLabel) > 75 || btn.AccessibilityLabel == "" {
			t.Errorf("%s button %+v: want a text and an accessibility label of at most 75 characters", rating, btn)
		}
		a, modal, err := decodeValue(btn.Value)
		if err != nil || modal != nil {
			t.Fatalf("%s value %q: %v", rating, btn.Value, err)
		}
		a, err = testSigner.Verify(a)
		want := conversation.Action{Name: conversation.ActionFeedback, Channel: "C1", ThreadTS: answerKey.ThreadTS, Arg: string(rating)}
		if err != nil || a != want {
			t.Errorf("%s value carries %+v, %v; want %+v signed", rating, a, err, want)
		}
	}
}

// feedbackPayload is Slack's sample block_actions payload of a feedback click, as
// clicked on the answer 1700000000.000300 in thread answerKey with value.
func feedbackPayload(t *testing.T, value string) slack.InteractionCallback {
	t.Helper()
	var cb slack.InteractionCallback
	if err := json.Unmarshal(readSample(t, "feedback_block_actions.json"), &cb); err != nil {
		t.Fatal(err)
	}
	cb.Container.ChannelID, cb.Channel.ID = "C1", "C1"
	cb.ActionCallback.BlockActions[0].ActionID = FeedbackActionID
	cb.ActionCallback.BlockActions[0].Value = value
	return cb
}

func TestFeedbackClick(t *testing.T) {
	b, err := testSigner.feedbackBlock(answerKey)
	if err != nil {
		t.Fatal(err)
	}
	el := b.Elements.ElementSet[0].(*slack.FeedbackButtonsBlockElement)
	me := Identity{TeamID: "T0", UserID: "UBOT"}

	t.Run("Positive", func(t *testing.T) {
		it, ok, reason := fromInteraction(feedbackPayload(t, el.PositiveButton.Value), me, "env-1", testSigner)
		want := conversation.Feedback{Key: conversation.Key{TeamID: "T0TEAM", ChannelID: "C1", ThreadTS: answerKey.ThreadTS},
			MessageTS: "1700000000.000300", UserID: "U0ALICE", Rating: conversation.RatingPositive}
		if !ok || it.feedback == nil || !reflect.DeepEqual(*it.feedback, want) || it.modal != nil {
			t.Fatalf("fromInteraction = %+v, %v, %q; want %+v and no modal", it, ok, reason, want)
		}
	})
	t.Run("NegativeOpensReasonModal", func(t *testing.T) {
		it, ok, reason := fromInteraction(feedbackPayload(t, el.NegativeButton.Value), me, "env-1", testSigner)
		if !ok || it.feedback == nil || it.feedback.Rating != conversation.RatingNegative || it.modal == nil {
			t.Fatalf("fromInteraction = %+v, %v, %q; want negative feedback and a modal", it, ok, reason)
		}
		v := it.modal.view
		if v.CallbackID != FeedbackCallbackID || it.modal.triggerID == "" {
			t.Fatalf("modal %+v; want callback %s and the trigger", v, FeedbackCallbackID)
		}
		input := v.Blocks.BlockSet[0].(*slack.InputBlock)
		if !input.Optional {
			t.Error("the reason is not optional")
		}
		// Its submission stores the reason, on the same message.
		sub := slack.InteractionCallback{Type: slack.InteractionTypeViewSubmission, User: slack.User{ID: "U0ALICE"}, Team: slack.Team{ID: "T0TEAM"},
			View: slack.View{ID: "V1", CallbackID: v.CallbackID, PrivateMetadata: v.PrivateMetadata,
				State: &slack.ViewState{Values: map[string]map[string]slack.BlockAction{feedbackBlockID: {modalActionID: {Value: "  wrong year "}}}}}}
		it, ok, reason = fromInteraction(sub, me, "env-2", testSigner)
		if !ok || it.feedback == nil || it.feedback.Reason != "wrong year" || it.feedback.MessageTS != "1700000000.000300" ||
			it.feedback.Rating != conversation.RatingNegative || it.feedback.Key.ChannelID != "C1" {
			t.Fatalf("submission = %+v, %v, %q; want the reason on the message", it.feedback, ok, reason)
		}
		// A forged submission (metadata not signed by the bot) is refused.
		forged := conversation.Action{Name: conversation.ActionFeedback, Channel: "C1", ThreadTS: answerKey.ThreadTS, Arg: "negative:1700000000.000300", Sig: "AAAAAAAAAAAAAAAA"}
		sub.View.PrivateMetadata, _ = forged.Encode()
		if _, ok, reason := fromInteraction(sub, me, "env-3", testSigner); ok || reason != dropBadSignature {
			t.Errorf("forged submission: ok %v, reason %q; want %q", ok, reason, dropBadSignature)
		}
	})
	t.Run("Forged", func(t *testing.T) {
		unsigned, _ := encodeValue(conversation.Action{Name: conversation.ActionFeedback, Channel: "C1", ThreadTS: answerKey.ThreadTS, Arg: "positive"}, nil, maxButtonValueChars)
		if _, ok, reason := fromInteraction(feedbackPayload(t, unsigned), me, "env-1", testSigner); ok || reason != dropUnsigned {
			t.Errorf("unsigned: ok %v, reason %q; want %q", ok, reason, dropUnsigned)
		}
		// The positive button's signature on a negative rating.
		a, _, _ := decodeValue(el.PositiveButton.Value)
		a.Arg = string(conversation.RatingNegative)
		tampered, _ := encodeValue(a, nil, maxButtonValueChars)
		if _, ok, reason := fromInteraction(feedbackPayload(t, tampered), me, "env-1", testSigner); ok || reason != dropBadSignature {
			t.Errorf("tampered: ok %v, reason %q; want %q", ok, reason, dropBadSignature)
		}
		// A genuine button of another thread.
		other, _ := testSigner.feedbackBlock(conversation.Key{TeamID: "T0", ChannelID: "C1", ThreadTS: "1700000000.000999"})
		v := other.Elements.ElementSet[0].(*slack.FeedbackButtonsBlockElement).PositiveButton.Value
		if _, ok, reason := fromInteraction(feedbackPayload(t, v), me, "env-1", testSigner); ok || reason != dropOtherThread {
			t.Errorf("other thread's button: ok %v, reason %q; want %q", ok, reason, dropOtherThread)
		}
	})
}

// TestAnswerBlocks: an answer's last message shows its text in sections of at most
// MaxSectionChars, then the feedback block.
func TestAnswerBlocks(t *testing.T) {
	fb, err := testSigner.feedbackBlock(answerKey)
	if err != nil {
		t.Fatal(err)
	}
	long := ""
	for len(long) < MaxSectionChars+500 {
		long += "word "
	}
	bs := answerBlocks(long, fb)
	if len(bs) != 3 || bs[2] != slack.Block(fb) {
		t.Fatalf("%d blocks; want 2 sections and the feedback block", len(bs))
	}
	for _, b := range bs[:2] {
		s := b.(*slack.SectionBlock)
		if s.Text.Type != slack.MarkdownType || utf8.RuneCountInString(s.Text.Text) > MaxSectionChars {
			t.Errorf("section of %d characters (%s)", utf8.RuneCountInString(s.Text.Text), s.Text.Type)
		}
	}
}
