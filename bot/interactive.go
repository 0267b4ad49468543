package bot

import (
	"errors"
	"strings"

	"github.com/slack-go/slack"

	"github.com/threadwright/threadwright/conversation"
)

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
	// (conversation.FieldError) before its ack; fieldActionID is their element's.
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

// fromInteraction turns an interactive payload (block_actions, view_submission,
// message_action) into an interaction. It returns ok false and the reason when the
// payload is not for the bot or cannot be read, or is refused (see refused): the
// action a value carries must be signed by signer, and a click's action must name the
// channel and thread of the message clicked (clickPlace). envelopeID stands in for a
// missing trigger_id in the input's ID: both are the same in a redelivered envelope.
func fromInteraction(cb slack.InteractionCallback, me Identity, envelopeID string, signer *Signer) (it interaction, ok bool, reason string) {
	team := firstNonEmpty(cb.Team.ID, cb.View.TeamID, me.TeamID)
	id := conversation.InteractionInputID(team, firstNonEmpty(cb.TriggerID, "envelope:"+envelopeID))
	switch cb.Type {
	case slack.InteractionTypeBlockActions:
		if cb.Container.Type == "view" {
			return it, false, dropViewAction
		}
		var value string
		found := false
		for _, a := range cb.ActionCallback.BlockActions {
			if strings.HasPrefix(a.ActionID, actionIDPrefix) {
				value, found = firstNonEmpty(a.Value, a.SelectedOption.Value), true
				break
			}
		}
		if !found {
			return it, false, dropNotOurs
		}
		signed, modal, err := decodeValue(value)
		if err != nil {
			return it, false, dropBadValue
		}
		if cb.User.ID == "" {
			return it, false, dropNoTarget
		}
		action, reason := verify(signer, signed)
		if reason != "" {
			return it, false, reason
		}
		if !clickPlace(cb, action) {
			return it, false, dropOtherThread
		}
		if action.Name == conversation.ActionFeedback {
			return feedbackClick(cb, action, team, signer)
		}
		if action.Name == conversation.ActionRetryCommand {
			return retryCommandClick(action, team, cb.User.ID, cb.TriggerID), true, ""
		}
		if modal != nil {
			view, err := modalView(signed, *modal)
			if err != nil {
				return it, false, dropBadValue
			}
			return interaction{modal: &modalRequest{triggerID: cb.TriggerID, userID: cb.User.ID, action: action, view: view}}, true, ""
		}
		return interaction{input: conversation.Input{
			ID:   id,
			Key:  conversation.Key{TeamID: team, ChannelID: action.Channel, ThreadTS: action.ThreadTS},
			Kind: conversation.KindAction,
			Action: &conversation.ActionInput{
				Action: action, UserID: cb.User.ID, MessageTS: firstNonEmpty(cb.Container.MessageTs, cb.Message.Timestamp),
			},
		}}, true, ""

	case slack.InteractionTypeViewSubmission:
		if cb.View.CallbackID == FeedbackCallbackID {
			return feedbackSubmission(cb, team, signer)
		}
		if cb.View.CallbackID != ModalCallbackID {
			return it, false, dropUnknownCallback
		}
		signed, err := conversation.DecodeAction(cb.View.PrivateMetadata)
		if err != nil {
			return it, false, dropBadValue
		}
		if cb.User.ID == "" {
			return it, false, dropNoTarget
		}
		// The metadata is the signed action of the button that opened the modal, whose
		// click passed clickPlace; a view carries no channel to check again.
		action, reason := verify(signer, signed)
		if reason != "" {
			return it, false, reason
		}
		if cb.TriggerID == "" && cb.View.ID != "" {
			id = conversation.InteractionInputID(team, "view:"+cb.View.ID) // a view is submitted once
		}
		values, errs := fieldValues(cb.View.State)
		if len(errs) > 0 {
			return interaction{viewErrors: errs}, true, ""
		}
		ai := &conversation.ActionInput{Action: action, UserID: cb.User.ID, Values: values}
		if values == nil {
			ai.Text = modalText(cb.View.State)
		}
		return interaction{input: conversation.Input{
			ID:     id,
			Key:    conversation.Key{TeamID: team, ChannelID: action.Channel, ThreadTS: action.ThreadTS},
			Kind:   conversation.KindAction,
			Action: ai,
		}}, true, ""

	case slack.InteractionTypeMessageAction:
		if cb.CallbackID != ShortcutCallbackID {
			return it, false, dropUnknownCallback
		}
		ts := firstNonEmpty(cb.MessageTs, cb.Message.Timestamp)
		if cb.Channel.ID == "" || cb.User.ID == "" || ts == "" {
			return it, false, dropNoTarget
		}
		return interaction{input: conversation.Input{
			ID:   id,
			Key:  conversation.Key{TeamID: team, ChannelID: cb.Channel.ID, ThreadTS: firstNonEmpty(cb.Message.ThreadTimestamp, ts)},
			Kind: conversation.KindCommand,
			Command: &conversation.CommandInput{
				Source: conversation.SourceShortcut, UserID: cb.User.ID, MessageTS: ts,
			},
		}}, true, ""
	}
	return it, false, dropInteraction
}

// retryCommandClick turns a click on the Retry of a failed channel command
// (conversation.ActionRetryCommand, on an ephemeral in the channel) into that command
// again: a KindCommand input without a thread, as userID, whose id is the same for
// every click on the button, so a second click is the same input. The click's
// triggerID opens the workflow's inputs modal, as the slash command's would have.
func retryCommandClick(action conversation.Action, team, userID, triggerID string) interaction {
	return interaction{input: conversation.Input{
		ID:   conversation.RetryCommandInputID(team, action.ThreadTS),
		Key:  conversation.Key{TeamID: team, ChannelID: action.Channel},
		Kind: conversation.KindCommand,
		Command: &conversation.CommandInput{
			Source: conversation.SourceSlash, UserID: userID, Line: action.Arg, TriggerID: triggerID,
		},
	}}
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
	if firstNonEmpty(cb.Container.ChannelID, cb.Channel.ID) != a.Channel {
		return false
	}
	thread := firstNonEmpty(cb.Container.ThreadTs, cb.Message.ThreadTimestamp)
	if thread == "" && cb.Container.IsEphemeral {
		return true
	}
	return firstNonEmpty(thread, cb.Container.MessageTs, cb.Message.Timestamp) == a.ThreadTS
}

// inputFromSlashCommand turns a slash command (/threadwright start proposal) into a
// KindCommand input whose Key has no ThreadTS: the conversation layer resolves the
// thread (Slack does not deliver slash commands typed in threads).
func inputFromSlashCommand(cmd slack.SlashCommand, me Identity, envelopeID string) (conversation.Input, bool, string) {
	team := firstNonEmpty(cmd.TeamID, me.TeamID)
	if cmd.ChannelID == "" || cmd.UserID == "" || team == "" {
		return conversation.Input{}, false, dropNoTarget
	}
	return conversation.Input{
		ID:   conversation.InteractionInputID(team, firstNonEmpty(cmd.TriggerID, "envelope:"+envelopeID)),
		Key:  conversation.Key{TeamID: team, ChannelID: cmd.ChannelID},
		Kind: conversation.KindCommand,
		Command: &conversation.CommandInput{
			Source: conversation.SourceSlash, UserID: cmd.UserID, Line: strings.TrimSpace(cmd.Text), TriggerID: cmd.TriggerID,
		},
	}, true, ""
}

// modalView builds the modal of a button (views.open): one multiline text input (or,
// for a modal with Fields, one input block per field: fieldBlocks),
// callback_id ModalCallbackID and the encoded action a (signed, as the button
// carried it) as private_metadata. Texts are
// cut to Slack's limits (title and submit 24 characters, label 2,000, placeholder
// 150, initial value 3,000); an empty title becomes "threadwright", an empty submit
// "Submit", an empty label the title. Errors: the action cannot be encoded.
func modalView(a conversation.Action, m conversation.Modal) (slack.ModalViewRequest, error) {
	meta, err := a.Encode()
	if err != nil {
		return slack.ModalViewRequest{}, err
	}
	title := firstNonEmpty(truncate(oneLine(m.Title), maxModalTitleChars), "threadwright")
	submit := firstNonEmpty(truncate(oneLine(m.Submit), maxModalButtonChars), "Submit")
	if len(m.Fields) > 0 {
		return slack.ModalViewRequest{
			Type:            slack.VTModal,
			Title:           slack.NewTextBlockObject(slack.PlainTextType, title, false, false),
			Submit:          slack.NewTextBlockObject(slack.PlainTextType, submit, false, false),
			Blocks:          slack.Blocks{BlockSet: fieldBlocks(m)},
			PrivateMetadata: meta,
			CallbackID:      ModalCallbackID,
		}, nil
	}
	label := firstNonEmpty(truncate(strings.TrimSpace(m.Label), maxInputLabelChars), title)
	el := slack.NewPlainTextInputBlockElement(nil, modalActionID)
	if p := truncate(oneLine(m.Placeholder), maxPlaceholderChars); p != "" {
		el.Placeholder = slack.NewTextBlockObject(slack.PlainTextType, p, false, false)
	}
	el.Multiline = true
	el.MaxLength = maxInputChars
	el.InitialValue = truncate(m.Initial, maxInputChars)
	input := slack.NewInputBlock(modalBlockID, slack.NewTextBlockObject(slack.PlainTextType, label, false, false), nil, el)
	return slack.ModalViewRequest{
		Type:            slack.VTModal,
		Title:           slack.NewTextBlockObject(slack.PlainTextType, title, false, false),
		Submit:          slack.NewTextBlockObject(slack.PlainTextType, submit, false, false),
		Blocks:          slack.Blocks{BlockSet: []slack.Block{input}},
		PrivateMetadata: meta,
		CallbackID:      ModalCallbackID,
	}, nil
}

// modalText reads the text typed in a threadwright modal: the input modalView made,
// or else the first plain-text input found.
func modalText(state *slack.ViewState) string {
	if state == nil {
		return ""
	}
	if a, ok := state.Values[modalBlockID][modalActionID]; ok {
		return strings.TrimSpace(a.Value)
	}
	for _, actions := range state.Values {
		for _, a := range actions {
			if a.Type == "plain_text_input" {
				return strings.TrimSpace(a.Value)
			}
		}
	}
	return ""
}

// fieldBlocks returns the input blocks of m's fields: a plain_text_input each
// (multiline for text), labelled with the field's label (or id), optional unless the
// field is required, its block_id naming the field (fieldBlockPrefix).
func fieldBlocks(m conversation.Modal) []slack.Block {
	blocks := make([]slack.Block, 0, len(m.Fields))
	for _, f := range m.Fields {
		el := slack.NewPlainTextInputBlockElement(nil, fieldActionID)
		el.Multiline = !f.Number
		el.MaxLength = maxInputChars
		label := firstNonEmpty(truncate(strings.TrimSpace(f.Label), maxInputLabelChars), f.ID)
		id := fieldBlockPrefix + m.Lang + "." + fieldFlags(f) + "." + f.ID
		in := slack.NewInputBlock(id, slack.NewTextBlockObject(slack.PlainTextType, label, false, false), nil, el)
		in.Optional = !f.Required
		blocks = append(blocks, in)
	}
	return blocks
}

// fieldValues reads the fields of a submitted modal that fieldBlocks made: their
// values by field id (trimmed), and what conversation.FieldError finds wrong by
// block_id. values is nil for a modal without such fields.
func fieldValues(state *slack.ViewState) (values, errs map[string]string) {
	if state == nil {
		return nil, nil
	}
	for blockID, actions := range state.Values {
		rest, ok := strings.CutPrefix(blockID, fieldBlockPrefix)
		if !ok {
			continue
		}
		parts := strings.SplitN(rest, ".", 3)
		if len(parts) != 3 || parts[2] == "" {
			continue
		}
		f := conversation.Field{ID: parts[2], Required: strings.Contains(parts[1], "r"), Number: strings.Contains(parts[1], "n")}
		value := strings.TrimSpace(actions[fieldActionID].Value)
		if msg := conversation.FieldError(parts[0], f, value); msg != "" {
			if errs == nil {
				errs = map[string]string{}
			}
			errs[blockID] = msg
		}
		if values == nil {
			values = map[string]string{}
		}
		values[f.ID] = value
	}
	return values, errs
}
