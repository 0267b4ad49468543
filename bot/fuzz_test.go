package bot

import (
	"cmp"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/threadwright/threadwright/conversation"
)

// The fuzz targets of the Slack adapter's decoding. Their seeds run in every go test;
// go test -fuzz=FuzzInputFromEvent ./bot (and the others) explores further.

// FuzzInputFromEvent: an Events API body either becomes an input addressed to a
// whole thread (team, channel and thread set, the ID made from them and the
// message's ts), whose text is the event's without the bot's mentions and never
// longer, or is dropped with a named reason.
func FuzzInputFromEvent(f *testing.F) {
	for _, event := range []string{
		`{"type":"app_mention","user":"U1","text":"<@UBOT> hello there","ts":"10.1","channel":"C1"}`,
		`{"type":"app_mention","user":"U1","text":"<@UBOT|bot> <@UBOT>  twice <@UBOTX>","ts":"10.5","thread_ts":"10.1","channel":"C1"}`,
		`{"type":"message","channel_type":"channel","user":"U1","text":"a reply","ts":"10.5","thread_ts":"10.1","channel":"C1"}`,
		`{"type":"message","channel_type":"im","user":"U1","text":"<@UBOT","ts":"10.5","channel":"D1"}`,
		`{"type":"message","subtype":"bot_message","bot_id":"B2","text":"x","ts":"10.5","channel":"C1"}`,
		`{"type":"message","user":"UBOT","text":"mine","ts":"10.5","thread_ts":"10.1","channel":"C1"}`,
		`{"type":"message","subtype":"message_changed","channel":"C1","message":{"text":"x"}}`,
		`{"type":"message","subtype":"message_changed","channel":"C1","message":{"user":"U1","text":"<@UBOT> y","ts":"10.1","edited":{"ts":"10.9"}},"previous_message":{"user":"U1","text":"x","ts":"10.1"}}`,
		`{"type":"message","subtype":"message_deleted","channel":"C1","deleted_ts":"10.1","previous_message":{"user":"U1","text":"x","ts":"10.1","thread_ts":"10.0"}}`,
		`{"type":"reaction_added","user":"U1"}`,
		`{"type":"app_mention","text":"no user","ts":"1","channel":"C1"}`,
	} {
		f.Add([]byte(callback(event)))
	}
	f.Add([]byte(`{"type":"url_verification","challenge":"x"}`))
	f.Add([]byte(`{"type":"event_callback","event":{"type":"app_mention","user":"U1","text":"hi","ts":"1.2","channel":"C9"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		ev, err := slackevents.ParseEvent(json.RawMessage(body), slackevents.OptionNoVerifyToken())
		if err != nil {
			return
		}
		in, ok, reason := inputFromEvent(ev, me)
		if !ok {
			if reason == "" {
				t.Fatal("dropped without a reason")
			}
			return
		}
		if reason != "" {
			t.Fatalf("accepted with reason %q", reason)
		}
		k := in.Key
		if k.TeamID == "" || k.ChannelID == "" || k.ThreadTS == "" || in.Message == nil {
			t.Fatalf("input %+v lacks its thread or message", in)
		}
		var id string
		switch in.Kind {
		case conversation.KindUserMessage:
			id = conversation.MessageInputID(k.TeamID, k.ChannelID, in.Message.TS)
		case conversation.KindEdit: // the edit's own ts ends it
			if id = in.ID; !strings.HasPrefix(id, "edit:"+k.TeamID+":"+k.ChannelID+":"+in.Message.TS+":") {
				id = "an edit of the message"
			}
		case conversation.KindDelete:
			id = conversation.DeleteInputID(k.TeamID, k.ChannelID, in.Message.TS)
		}
		if in.ID != id {
			t.Fatalf("ID %q of a %s is not %q", in.ID, in.Kind, id)
		}
		if in.Message.UserID == me.UserID {
			t.Fatal("the bot's own message accepted")
		}
		var raw string
		switch e := ev.InnerEvent.Data.(type) {
		case *slackevents.AppMentionEvent:
			raw = e.Text
		case *slackevents.MessageEvent:
			raw = e.Text
			if e.SubType == "message_changed" && e.Message != nil {
				raw = e.Message.Text
			}
		}
		if len(in.Message.Text) > len(raw) {
			t.Fatalf("text grew: %q from %q", in.Message.Text, raw)
		}
		if mentions(in.Message.Text, me.UserID) {
			t.Fatalf("the bot's mention left in %q", in.Message.Text)
		}
	})
}

// FuzzFromInteraction: an interactive payload that becomes a click is a signed
// action (an unsigned or re-signed value is never accepted), addressed to the
// channel and thread of the message clicked (clickPlace); anything dropped has a
// reason.
func FuzzFromInteraction(f *testing.F) {
	sig := func(a conversation.Action) string {
		s, err := testSigner.Sign(a)
		if err != nil {
			f.Fatal(err)
		}
		v, err := encodeValue(s, nil, maxButtonValueChars)
		if err != nil {
			f.Fatal(err)
		}
		return v
	}
	payload := func(value, channel, thread, messageTS string, ephemeral bool) []byte {
		p := map[string]any{
			"type": "block_actions", "trigger_id": "1.2.3", "team": map[string]any{"id": "T1"}, "user": map[string]any{"id": "U1"},
			"container": map[string]any{"type": "message", "message_ts": messageTS, "channel_id": channel, "thread_ts": thread, "is_ephemeral": ephemeral},
			"channel":   map[string]any{"id": channel},
			"actions":   []any{map[string]any{"type": "button", "action_id": "tw:1:0", "value": value}},
		}
		if !ephemeral {
			p["message"] = map[string]any{"ts": messageTS, "thread_ts": thread}
		}
		b, _ := json.Marshal(p)
		return b
	}
	genuine := sig(approve)
	f.Add(payload(genuine, "C1", "10.1", "10.5", false))
	f.Add(payload(genuine, "C1", "", "10.1", false))
	f.Add(payload(genuine, "C1", "", "20.5", true))
	f.Add(payload(genuine, "C2", "10.1", "10.5", false))
	f.Add(payload(genuine, "C1", "30.1", "30.5", false))
	unsignedValue, _ := encodeValue(approve, nil, maxButtonValueChars)
	f.Add(payload(unsignedValue, "C1", "10.1", "10.5", false))
	f.Add(payload(sig(conversation.Action{Name: conversation.ActionCommand, Channel: "C1", ThreadTS: "10.1", Arg: "status"}), "C1", "", "20.5", true))
	meta, _ := signed(f, approve).Encode()
	f.Add([]byte(`{"type":"view_submission","user":{"id":"U2"},"view":{"id":"V1","callback_id":"tw_modal","private_metadata":` + jsonString(meta) + `}}`))
	f.Add([]byte(`{"type":"message_action","callback_id":"threadwright_actions","trigger_id":"5","message_ts":"10.5","user":{"id":"U1"},"channel":{"id":"C1"},"message":{"ts":"10.5","thread_ts":"10.1"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var cb slack.InteractionCallback
		if err := json.Unmarshal(body, &cb); err != nil {
			return
		}
		it, ok, reason := fromInteraction(cb, Identity{TeamID: "T0"}, "env-1", testSigner)
		if !ok {
			if reason == "" {
				t.Fatal("dropped without a reason")
			}
			return
		}
		if it.input.Kind != conversation.KindAction && it.modal == nil {
			return // a shortcut: its thread is the message's own
		}
		var value string
		switch cb.Type {
		case slack.InteractionTypeBlockActions:
			for _, a := range cb.ActionCallback.BlockActions {
				if strings.HasPrefix(a.ActionID, actionIDPrefix) {
					value = cmp.Or(a.Value, a.SelectedOption.Value)
					break
				}
			}
		case slack.InteractionTypeViewSubmission:
			value = cb.View.PrivateMetadata
		default:
			t.Fatalf("a %s payload became an action", cb.Type)
		}
		signed, _, err := decodeValue(value)
		if err != nil {
			t.Fatalf("accepted an undecodable value %q", value)
		}
		action, err := testSigner.Verify(signed)
		if err != nil {
			t.Fatalf("accepted a value the bot did not sign: %q (%v)", value, err)
		}
		got := action
		if it.modal != nil {
			got = it.modal.action
		} else {
			got = it.input.Action.Action
			if it.input.Key.ChannelID != action.Channel || it.input.Key.ThreadTS != action.ThreadTS {
				t.Fatalf("key %v is not the action's %s/%s", it.input.Key, action.Channel, action.ThreadTS)
			}
		}
		if got != action || got.Sig != "" {
			t.Fatalf("action %+v; the value carried %+v", got, action)
		}
		if cb.Type == slack.InteractionTypeBlockActions {
			if cmp.Or(cb.Container.ChannelID, cb.Channel.ID) != action.Channel {
				t.Fatalf("a click in %q acts on channel %q", cmp.Or(cb.Container.ChannelID, cb.Channel.ID), action.Channel)
			}
			thread := cmp.Or(cb.Container.ThreadTs, cb.Message.ThreadTimestamp)
			if !(thread == "" && cb.Container.IsEphemeral) && cmp.Or(thread, cb.Container.MessageTs, cb.Message.Timestamp) != action.ThreadTS {
				t.Fatalf("a click in thread %q acts on thread %q", thread, action.ThreadTS)
			}
		}
	})
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// FuzzValueRoundTrip: a signed action (with or without a modal) encodes within the
// limit or fails with errValueTooLong, decodes to what was encoded (modal texts
// shortened as documented), and verifies; the value of an option (150 characters)
// still carries a signature.
func FuzzValueRoundTrip(f *testing.F) {
	f.Add("approve", "C1", "10.1", "budget", 4, "", "", "", 2000)
	f.Add("edit", "C1", "10.1", "budget", 4, "", "Edit", "What should change?", 150)
	f.Add("pick", "C0GENERAL", "1700000000.000100", "problem_statement", 12, "B", "", "", 150)
	f.Add("command", "C1", "10.1", "", 0, strings.Repeat("restart x ", 20), "", "", 150)
	f.Add("edit", "C1", "10.1", "ä\"<>&", 1, "\u2028", "Заголовок заголовок заголовок", strings.Repeat("label ", 500), 2000)
	f.Fuzz(func(t *testing.T, name, channel, thread, artifact string, rev int, arg, title, label string, limit int) {
		a := conversation.Action{Name: conversation.ActionName(name), Channel: channel, ThreadTS: thread, Artifact: artifact, Rev: rev, Arg: arg}
		valid := true
		for _, s := range []string{name, channel, thread, artifact, arg, title, label} {
			valid = valid && utf8.ValidString(s)
		}
		if name == "" || channel == "" || thread == "" || !valid {
			return // not an action the bot draws; invalid UTF-8 does not survive JSON
		}
		limit = []int{maxOptionValueChars, maxButtonValueChars}[abs(limit)%2]
		var m *conversation.Modal
		if title != "" || label != "" {
			m = &conversation.Modal{Title: title, Label: label}
		}
		s, err := testSigner.Sign(a)
		if err != nil {
			return // too long to encode at all
		}
		v, err := encodeValue(s, m, limit)
		if err != nil {
			return
		}
		if runes(v) > limit {
			t.Fatalf("value of %d characters, limit %d", runes(v), limit)
		}
		got, gm, err := decodeValue(v)
		if err != nil {
			t.Fatalf("decode %q: %v", v, err)
		}
		if (gm == nil) != (m == nil) {
			t.Fatalf("modal %v, encoded %v", gm, m)
		}
		if gm != nil && (gm.Title != truncate(m.Title, maxModalTitleChars) || !strings.HasPrefix(truncate(m.Label, maxInputLabelChars), strings.TrimSuffix(gm.Label, "…"))) {
			t.Fatalf("modal %+v from %+v", gm, m)
		}
		verified, err := testSigner.Verify(got)
		if err != nil {
			t.Fatalf("verify %q: %v", v, err)
		}
		if verified != a {
			t.Fatalf("round trip %+v, want %+v", verified, a)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// FuzzSignedValueMutation: a signed value changed anywhere either is refused (does
// not decode, or does not verify) or carries the very action signed: no change of a
// byte makes the bot act on another action.
func FuzzSignedValueMutation(f *testing.F) {
	f.Add(0, byte('x'), false)
	f.Add(5, byte('2'), false)
	f.Add(30, byte('5'), true)
	f.Add(-1, byte('"'), true)
	f.Add(60, byte('A'), false)
	actions := []struct {
		a conversation.Action
		m *conversation.Modal
	}{
		{approve, nil},
		{edit, askEdit},
		{conversation.Action{Name: conversation.ActionPick, Channel: "C1", ThreadTS: "10.1", Artifact: "problem", Rev: 2, Arg: "B"}, nil},
	}
	f.Fuzz(func(t *testing.T, pos int, b byte, insert bool) {
		for _, c := range actions {
			s, err := testSigner.Sign(c.a)
			if err != nil {
				t.Fatal(err)
			}
			v, err := encodeValue(s, c.m, maxButtonValueChars)
			if err != nil {
				t.Fatal(err)
			}
			i := abs(pos) % (len(v) + 1)
			var mutated string
			if insert || i == len(v) {
				mutated = v[:i] + string([]byte{b}) + v[i:]
			} else {
				mutated = v[:i] + string([]byte{b}) + v[i+1:]
			}
			got, _, err := decodeValue(mutated)
			if err != nil {
				continue
			}
			a, err := testSigner.Verify(got)
			if err != nil {
				continue
			}
			if a != c.a {
				t.Fatalf("mutated value %q accepted as %+v; signed %+v", mutated, a, c.a)
			}
		}
	})
}
