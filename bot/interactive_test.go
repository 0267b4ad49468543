package bot

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/threadwright/threadwright/conversation"
)

// interactiveFixtures holds Slack's published samples of interactive payloads (see
// ../../shared/fixtures/SOURCES.md): every field Slack may send, values blanked.
var interactiveFixtures = filepath.Join("..", "..", "shared", "fixtures", "slack", "interactive")

// fixture reads a sample payload and sets realistic values at dotted paths
// ("container.message_ts"); a nil value deletes the field.
func fixture(t *testing.T, name string, values map[string]any) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(interactiveFixtures, name))
	if os.IsNotExist(err) {
		t.Skipf("fixture %s not found", name)
	}
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	for path, v := range values {
		setPath(m, strings.Split(path, "."), v)
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func setPath(m map[string]any, path []string, v any) {
	if len(path) == 1 {
		if v == nil {
			delete(m, path[0])
		} else {
			m[path[0]] = v
		}
		return
	}
	next, ok := m[path[0]].(map[string]any)
	if !ok {
		next = map[string]any{}
		m[path[0]] = next
	}
	setPath(next, path[1:], v)
}

// callbackOf decodes a payload the way slack-go's socketmode does.
func callbackOf(t *testing.T, payload []byte) slack.InteractionCallback {
	t.Helper()
	var cb slack.InteractionCallback
	if err := json.Unmarshal(payload, &cb); err != nil {
		t.Fatalf("decode interaction: %v", err)
	}
	return cb
}

// testSigner signs the values of the tests' buttons.
var testSigner = func() *Signer {
	s, err := NewSigner([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		panic(err)
	}
	return s
}()

// signed returns a signed by testSigner.
func signed(t testing.TB, a conversation.Action) conversation.Action {
	t.Helper()
	a, err := testSigner.Sign(a)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// encoded returns the value of a button carrying a, signed by testSigner, and m.
func encoded(t *testing.T, a conversation.Action, m *conversation.Modal) string {
	t.Helper()
	return unsigned(t, signed(t, a), m)
}

// metadata returns the private_metadata of a modal opened for a, as modalView
// writes it.
func metadata(t *testing.T, a conversation.Action) string {
	t.Helper()
	v, err := signed(t, a).Encode()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// unsigned returns the value of a button carrying a as it is, and m.
func unsigned(t *testing.T, a conversation.Action, m *conversation.Modal) string {
	t.Helper()
	v, err := encodeValue(a, m, maxButtonValueChars)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

var (
	approve = conversation.Action{Name: conversation.ActionApprove, Channel: "C1", ThreadTS: "10.1", Artifact: "budget", Rev: 4}
	changes = conversation.Action{Name: conversation.ActionRequestChanges, Channel: "C1", ThreadTS: "10.1", Artifact: "budget", Rev: 4}
	restart = conversation.Action{Name: conversation.ActionRestart, Channel: "C1", ThreadTS: "10.1", Artifact: "budget", Rev: 4}
	edit    = conversation.Action{Name: conversation.ActionEdit, Channel: "C1", ThreadTS: "10.1", Artifact: "budget", Rev: 4}
	askEdit = &conversation.Modal{Title: "Edit", Label: "What should change?", Submit: "Edit", Placeholder: "Shorter"}
)

// withoutBlanks drops the parts of the samples' message whose blanked numbers ("" for
// an attachment ts, a file's created time) slack-go cannot decode, unless values sets
// them; threadwright reads none of them.
func withoutBlanks(values map[string]any) map[string]any {
	for _, k := range []string{"message.attachments", "message.files", "message.file", "message.comment", "message.item"} {
		if _, ok := values[k]; !ok {
			values[k] = nil
		}
	}
	return values
}

// blockActions returns the sample block_actions payload of alice acting on the bot's
// message 10.5 in the thread 10.1 of C1 with action.
func blockActions(t *testing.T, action map[string]any, extra map[string]any) []byte {
	values := map[string]any{
		"type":                 "block_actions",
		"team":                 map[string]any{"id": "T1", "domain": "acme"},
		"user":                 map[string]any{"id": "U1", "username": "alice", "name": "alice", "team_id": "T1"},
		"trigger_id":           "123.456.abc",
		"container.type":       "message",
		"container.message_ts": "10.5",
		"container.channel_id": "C1",
		"container.thread_ts":  "10.1",
		"channel":              map[string]any{"id": "C1", "name": "general"},
		"message.ts":           "10.5",
		"message.thread_ts":    "10.1",
		"view":                 nil,
		"actions":              []any{action},
	}
	for k, v := range extra {
		values[k] = v
	}
	return fixture(t, "BlockActionPayload.json", withoutBlanks(values))
}

func TestFromInteraction(t *testing.T) {
	button := func(value string) map[string]any {
		return map[string]any{"type": "button", "action_id": "tw:4:0", "block_id": "b1", "value": value,
			"text": map[string]any{"type": "plain_text", "text": "Approve"}, "action_ts": "10.6"}
	}
	tests := []struct {
		name    string
		payload []byte
		want    conversation.Input
		reason  string
	}{
		{
			name:    "ButtonClick",
			payload: blockActions(t, button(encoded(t, approve, nil)), nil),
			want: conversation.Input{ID: "int:T1:123.456.abc", Key: conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "10.1"}, Kind: conversation.KindAction,
				Action: &conversation.ActionInput{Action: approve, UserID: "U1", MessageTS: "10.5"}},
		},
		{
			name: "OverflowOption",
			payload: blockActions(t, map[string]any{"type": "overflow", "action_id": "tw:4:menu", "block_id": "b1", "action_ts": "10.6",
				"selected_option": map[string]any{"text": map[string]any{"type": "plain_text", "text": "Restart"}, "value": encoded(t, restart, nil)}}, nil),
			want: conversation.Input{ID: "int:T1:123.456.abc", Key: conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "10.1"}, Kind: conversation.KindAction,
				Action: &conversation.ActionInput{Action: restart, UserID: "U1", MessageTS: "10.5"}},
		},
		{
			name: "EphemeralMessage",
			payload: blockActions(t, button(encoded(t, approve, nil)), map[string]any{
				"container.is_ephemeral": true, "message": nil, "trigger_id": "", "team": map[string]any{"id": ""},
			}),
			want: conversation.Input{ID: "int:T0:envelope:env-1", Key: conversation.Key{TeamID: "T0", ChannelID: "C1", ThreadTS: "10.1"}, Kind: conversation.KindAction,
				Action: &conversation.ActionInput{Action: approve, UserID: "U1", MessageTS: "10.5"}},
		},
		{
			name: "RootMessage",
			payload: blockActions(t, button(encoded(t, approve, nil)), map[string]any{
				"container.message_ts": "10.1", "container.thread_ts": nil, "message.ts": "10.1", "message.thread_ts": nil,
			}),
			want: conversation.Input{ID: "int:T1:123.456.abc", Key: conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "10.1"}, Kind: conversation.KindAction,
				Action: &conversation.ActionInput{Action: approve, UserID: "U1", MessageTS: "10.1"}},
		},
		{
			name: "EphemeralMenuInChannel",
			payload: blockActions(t, button(encoded(t, approve, nil)), map[string]any{
				"container.is_ephemeral": true, "container.message_ts": "20.5", "container.thread_ts": nil, "message": nil,
			}),
			want: conversation.Input{ID: "int:T1:123.456.abc", Key: conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "10.1"}, Kind: conversation.KindAction,
				Action: &conversation.ActionInput{Action: approve, UserID: "U1", MessageTS: "20.5"}},
		},
		{name: "Unsigned", payload: blockActions(t, button(unsigned(t, approve, nil)), nil), reason: dropUnsigned},
		{name: "UnsignedModal", payload: blockActions(t, button(unsigned(t, edit, askEdit)), nil), reason: dropUnsigned},
		{name: "ForgedSignature", payload: blockActions(t, button(unsigned(t, conversation.Action{Name: conversation.ActionApprove, Channel: "C1", ThreadTS: "10.1", Artifact: "budget", Rev: 4, Sig: "AAAAAAAAAAAAAAAA"}, nil)), nil), reason: dropBadSignature},
		{name: "SignatureOfAnotherAction", payload: blockActions(t, button(unsigned(t, func() conversation.Action {
			a := signed(t, approve)
			a.Rev = 5 // the signature of revision 4
			return a
		}(), nil)), nil), reason: dropBadSignature},
		{name: "ValueFromAnotherChannel", payload: blockActions(t, button(encoded(t, approve, nil)), map[string]any{
			"container.channel_id": "C2", "channel": map[string]any{"id": "C2", "name": "random"}}), reason: dropOtherThread},
		{name: "ValueFromAnotherThread", payload: blockActions(t, button(encoded(t, approve, nil)), map[string]any{
			"container.thread_ts": "30.1", "message.thread_ts": "30.1"}), reason: dropOtherThread},
		{name: "ModalValueFromAnotherThread", payload: blockActions(t, button(encoded(t, edit, askEdit)), map[string]any{
			"container.thread_ts": "30.1", "message.thread_ts": "30.1"}), reason: dropOtherThread},
		{name: "EphemeralInAnotherThread", payload: blockActions(t, button(encoded(t, approve, nil)), map[string]any{
			"container.is_ephemeral": true, "container.thread_ts": "30.1", "message": nil}), reason: dropOtherThread},
		{name: "ViewSubmissionUnsigned", payload: fixture(t, "ViewSubmissionPayload.json", map[string]any{
			"type": "view_submission", "user": map[string]any{"id": "U2"}, "view.callback_id": ModalCallbackID, "view.private_metadata": unsigned(t, changes, nil)}), reason: dropUnsigned},
		{name: "OtherAppsElement", payload: blockActions(t, map[string]any{"type": "button", "action_id": "vote", "block_id": "b1", "value": "x"}, nil), reason: dropNotOurs},
		{name: "GarbageValue", payload: blockActions(t, button("not json"), nil), reason: dropBadValue},
		{name: "ValueWithoutThread", payload: blockActions(t, button(`{"n":"approve","c":"C1"}`), nil), reason: dropBadValue},
		{name: "ActionInsideAView", payload: blockActions(t, button(encoded(t, approve, nil)), map[string]any{"container.type": "view", "container.view_id": "V1"}), reason: dropViewAction},
		{
			name: "ViewSubmission",
			payload: fixture(t, "ViewSubmissionPayload.json", map[string]any{
				"type": "view_submission", "team": map[string]any{"id": "T1"}, "user": map[string]any{"id": "U2", "name": "bob"},
				"trigger_id": "789.000.def", "view.id": "V1", "view.callback_id": ModalCallbackID,
				"view.private_metadata": metadata(t, changes),
				"view.state":            map[string]any{"values": map[string]any{modalBlockID: map[string]any{modalActionID: map[string]any{"type": "plain_text_input", "value": "  Cut travel by half.\n"}}}},
			}),
			want: conversation.Input{ID: "int:T1:789.000.def", Key: conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "10.1"}, Kind: conversation.KindAction,
				Action: &conversation.ActionInput{Action: changes, UserID: "U2", Text: "Cut travel by half."}},
		},
		{
			name: "ViewSubmissionOtherInputIDs",
			payload: fixture(t, "ViewSubmissionPayload.json", map[string]any{
				"type": "view_submission", "team": map[string]any{"id": "T1"}, "user": map[string]any{"id": "U2"},
				"trigger_id": "", "view.id": "V9", "view.callback_id": ModalCallbackID, "view.private_metadata": metadata(t, changes),
				"view.state": map[string]any{"values": map[string]any{"x": map[string]any{"y": map[string]any{"type": "plain_text_input", "value": "shorter"}}}},
			}),
			want: conversation.Input{ID: "int:T1:view:V9", Key: conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "10.1"}, Kind: conversation.KindAction,
				Action: &conversation.ActionInput{Action: changes, UserID: "U2", Text: "shorter"}},
		},
		{name: "ViewOfAnotherCallback", payload: fixture(t, "ViewSubmissionPayload.json", map[string]any{
			"type": "view_submission", "user": map[string]any{"id": "U2"}, "view.callback_id": "something_else", "view.private_metadata": metadata(t, changes)}), reason: dropUnknownCallback},
		{name: "ViewWithBadMetadata", payload: fixture(t, "ViewSubmissionPayload.json", map[string]any{
			"type": "view_submission", "user": map[string]any{"id": "U2"}, "view.callback_id": ModalCallbackID, "view.private_metadata": "{"}), reason: dropBadValue},
		{
			name: "MessageShortcutOnReply",
			payload: fixture(t, "MessageShortcutPayload.json", withoutBlanks(map[string]any{
				"type": "message_action", "callback_id": ShortcutCallbackID, "trigger_id": "555.1.x", "message_ts": "10.5",
				"team": map[string]any{"id": "T1"}, "user": map[string]any{"id": "U1", "name": "alice"}, "channel": map[string]any{"id": "C1", "name": "general"},
				"message.ts": "10.5", "message.thread_ts": "10.1",
			})),
			want: conversation.Input{ID: "int:T1:555.1.x", Key: conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "10.1"}, Kind: conversation.KindCommand,
				Command: &conversation.CommandInput{Source: conversation.SourceShortcut, UserID: "U1", MessageTS: "10.5"}},
		},
		{
			name: "MessageShortcutOnParent",
			payload: fixture(t, "MessageShortcutPayload.json", withoutBlanks(map[string]any{
				"type": "message_action", "callback_id": ShortcutCallbackID, "trigger_id": "555.2.x", "message_ts": "10.1",
				"team": map[string]any{"id": "T1"}, "user": map[string]any{"id": "U1"}, "channel": map[string]any{"id": "C1"},
				"message.ts": "10.1", "message.thread_ts": "",
			})),
			want: conversation.Input{ID: "int:T1:555.2.x", Key: conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "10.1"}, Kind: conversation.KindCommand,
				Command: &conversation.CommandInput{Source: conversation.SourceShortcut, UserID: "U1", MessageTS: "10.1"}},
		},
		{name: "OtherShortcut", payload: fixture(t, "MessageShortcutPayload.json", withoutBlanks(map[string]any{
			"type": "message_action", "callback_id": "other"})), reason: dropUnknownCallback},
		{name: "GlobalShortcut", payload: []byte(`{"type":"shortcut","callback_id":"threadwright_actions","trigger_id":"1.2.3","user":{"id":"U1"},"team":{"id":"T1"}}`), reason: dropInteraction},
		{name: "ViewClosed", payload: []byte(`{"type":"view_closed","user":{"id":"U1"},"view":{"id":"V1","callback_id":"tw_modal"}}`), reason: dropInteraction},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			it, ok, reason := fromInteraction(callbackOf(t, tt.payload), Identity{TeamID: "T0", UserID: "UBOT"}, "env-1", testSigner)
			if tt.reason != "" {
				if ok || reason != tt.reason {
					t.Fatalf("got ok=%v reason=%q, want dropped with %q", ok, reason, tt.reason)
				}
				return
			}
			if !ok {
				t.Fatalf("dropped: %s", reason)
			}
			if it.modal != nil {
				t.Fatalf("asks for a modal: %+v", it.modal)
			}
			if !reflect.DeepEqual(it.input, tt.want) {
				t.Errorf("input =\n%+v %+v %+v\nwant\n%+v %+v %+v", it.input, it.input.Action, it.input.Command, tt.want, tt.want.Action, tt.want.Command)
			}
		})
	}
}

func TestFromInteractionModal(t *testing.T) {
	for name, action := range map[string]map[string]any{
		"Button": {"type": "button", "action_id": "tw:4:1", "block_id": "b1", "value": encoded(t, edit, askEdit), "action_ts": "10.6"},
		"Overflow": {"type": "overflow", "action_id": "tw:4:menu", "block_id": "b1", "action_ts": "10.6",
			"selected_option": map[string]any{"text": map[string]any{"type": "plain_text", "text": "Edit…"}, "value": encoded(t, edit, askEdit)}},
	} {
		t.Run(name, func(t *testing.T) {
			it, ok, reason := fromInteraction(callbackOf(t, blockActions(t, action, nil)), Identity{TeamID: "T0"}, "env-1", testSigner)
			if !ok || it.modal == nil {
				t.Fatalf("ok=%v reason=%q modal=%v", ok, reason, it.modal)
			}
			m := it.modal
			if m.triggerID != "123.456.abc" || m.userID != "U1" || m.action != edit {
				t.Errorf("modal request %+v", m)
			}
			v := m.view
			meta, _ := signed(t, edit).Encode()
			if v.Type != slack.VTModal || v.CallbackID != ModalCallbackID || v.PrivateMetadata != meta ||
				v.Title.Text != "Edit" || v.Submit.Text != "Edit" || len(v.Blocks.BlockSet) != 1 {
				t.Fatalf("view %+v", v)
			}
			in := v.Blocks.BlockSet[0].(*slack.InputBlock)
			el := in.Element.(*slack.PlainTextInputBlockElement)
			if in.BlockID != modalBlockID || in.Label.Text != "What should change?" || el.ActionID != modalActionID ||
				!el.Multiline || el.Placeholder.Text != "Shorter" || el.MaxLength != 3000 {
				t.Errorf("input block %+v, element %+v", in, el)
			}
		})
	}
}

func TestModalViewDefaults(t *testing.T) {
	v, err := modalView(edit, conversation.Modal{Title: strings.Repeat("Заголовок ", 5), Initial: strings.Repeat("x", 4000)})
	if err != nil {
		t.Fatal(err)
	}
	in := v.Blocks.BlockSet[0].(*slack.InputBlock)
	el := in.Element.(*slack.PlainTextInputBlockElement)
	if runes(v.Title.Text) > 24 || v.Submit.Text != "Submit" || in.Label.Text != v.Title.Text || runes(el.InitialValue) != 3000 || el.Placeholder != nil {
		t.Errorf("view %+v, input %+v", v, el)
	}
}

func TestInputFromSlashCommand(t *testing.T) {
	payload := fixture(t, "SlashCommandPayload.json", map[string]any{
		"team_id": "T1", "channel_id": "C1", "channel_name": "general", "user_id": "U1", "user_name": "alice",
		"command": "/threadwright", "text": "  restart budget ", "trigger_id": "42.1.z", "response_url": "https://hooks.slack.com/commands/x",
	})
	var cmd slack.SlashCommand
	if err := json.Unmarshal(payload, &cmd); err != nil {
		t.Fatal(err)
	}
	in, ok, reason := inputFromSlashCommand(cmd, Identity{TeamID: "T0"}, "env-1")
	want := conversation.Input{ID: "int:T1:42.1.z", Key: conversation.Key{TeamID: "T1", ChannelID: "C1"}, Kind: conversation.KindCommand,
		Command: &conversation.CommandInput{Source: conversation.SourceSlash, UserID: "U1", Line: "restart budget", TriggerID: "42.1.z"}}
	if !ok || !reflect.DeepEqual(in, want) {
		t.Errorf("input %+v %+v (ok=%v %s), want %+v", in, in.Command, ok, reason, want)
	}
	if _, ok, reason := inputFromSlashCommand(slack.SlashCommand{Command: "/threadwright"}, Identity{}, "env-1"); ok || reason != dropNoTarget {
		t.Errorf("a command without channel or user: ok=%v reason=%q", ok, reason)
	}
}
