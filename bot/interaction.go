package bot

import (
	"cmp"
	"errors"

	"github.com/slack-go/slack"

	"github.com/threadwright/threadwright/conversation"
)

// What an interactive envelope asks of the bot (interaction), the surfaces it comes
// from, why one is dropped, and the checks that a click may act: its action is signed
// (verify) and names the thread clicked (clickPlace). interactive.go reads the
// payloads; feedback.go reads the feedback buttons' and modal's.

// Identifiers of threadwright's interactive surfaces.
const (
	// ShortcutCallbackID is the callback_id of the message shortcut on the bot's
	// messages (NewManifest declares it): it asks for the commands of that message's
	// thread.
	ShortcutCallbackID = "threadwright_actions"
	// ModalCallbackID is the callback_id of the modals opened by buttons that carry a
	// conversation.Modal; their private_metadata is the encoded Action.
	ModalCallbackID = "tw_modal"

	// modalBlockID and modalActionID name the modal's text input.
	modalBlockID  = "tw_text"
	modalActionID = "text"
	// fieldBlockPrefix begins the block_id of each input of a modal with several
	// (conversation.Modal.Fields): tw_f.<lang>.<flags>.<field id>, flags holding "r"
	// (required) and "n" (a number), so that the submission can be checked
	// (render.FieldError) before its ack; fieldActionID is their element's.
	fieldBlockPrefix = "tw_f."
	fieldActionID    = "value"
)

// Drop reasons of interactions, for logs and tests.
const (
	dropNotOurs         = "not a threadwright element"
	dropBadValue        = "undecodable action value"
	dropUnknownCallback = "unknown callback_id"
	dropViewAction      = "block action inside a view"
	dropInteraction     = "interaction type not handled"
	dropNoTarget        = "interaction lacks channel, user or message"
	// The drops of a click or submission the bot refuses (docs/workflows.md, "Buttons are
	// signed"): the clicker is told.
	dropUnsigned     = "action value not signed"
	dropBadSignature = "action value signature does not match"
	dropOtherThread  = "action value names another channel or thread than its message"
)

// refusedClickText is what the person whose click or submission was refused is told.
const refusedClickText = "⚠️ This button can no longer be used. Use the buttons on the newest message in the thread, or type `/threadwright status` to see where the workflow is."

// refused reports whether reason is a drop whose clicker is told.
func refused(reason string) bool {
	return reason == dropUnsigned || reason == dropBadSignature || reason == dropOtherThread
}

// interaction is what an interactive envelope asks of the bot: an input to submit, or
// (when modal is set) a modal to open at once.
type interaction struct {
	input conversation.Input
	modal *modalRequest
	// feedback, when set, is a click of an answer's feedback buttons (or the reason
	// modal's submission) to store; modal may come with it (bot/feedback.go).
	feedback *conversation.Feedback
	// viewErrors, when set, are the messages to show under the inputs of a modal's
	// submission that is not taken (block_id → message): the ack's response_action
	// "errors".
	viewErrors map[string]string
}

// modalRequest is a modal to open with views.open before the trigger expires.
type modalRequest struct {
	triggerID string
	userID    string
	action    conversation.Action
	view      slack.ModalViewRequest
}

// verify returns the action signed carries, or the drop reason when signer did not
// sign it.
func verify(signer *Signer, signed conversation.Action) (conversation.Action, string) {
	a, err := signer.Verify(signed)
	switch {
	case errors.Is(err, errUnsigned):
		return a, dropUnsigned
	case err != nil:
		return a, dropBadSignature
	}
	return a, ""
}

// clickPlace reports whether a, the action of a click, names the channel and thread
// of the message clicked: the payload's container.channel_id (or channel.id), and
// its container.thread_ts (or message.thread_ts, or, for a message that starts no
// thread, the message's own ts). An ephemeral message's thread is not always told:
// when it is not, its channel must match (the bot's menus posted in a channel, with
// actions on that channel's threads, are ephemeral).
func clickPlace(cb slack.InteractionCallback, a conversation.Action) bool {
	if cmp.Or(cb.Container.ChannelID, cb.Channel.ID) != a.Channel {
		return false
	}
	thread := cmp.Or(cb.Container.ThreadTs, cb.Message.ThreadTimestamp)
	if thread == "" && cb.Container.IsEphemeral {
		return true
	}
	return cmp.Or(thread, cb.Container.MessageTs, cb.Message.Timestamp) == a.ThreadTS
}
