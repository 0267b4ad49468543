package bot

import (
	"cmp"
	"strings"

	"github.com/slack-go/slack"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/render"
)

// fromInteraction turns an interactive payload (block_actions, view_submission,
// message_action) into an interaction. It returns ok false and the reason when the
// payload is not for the bot or cannot be read, or is refused (see refused): the
// action a value carries must be signed by signer, and a click's action must name the
// channel and thread of the message clicked (clickPlace). envelopeID stands in for a
// missing trigger_id in the input's ID: both are the same in a redelivered envelope.
func fromInteraction(cb slack.InteractionCallback, me Identity, envelopeID string, signer *Signer) (it interaction, ok bool, reason string) {
	team := cmp.Or(cb.Team.ID, cb.View.TeamID, me.TeamID)
	id := conversation.InteractionInputID(team, cmp.Or(cb.TriggerID, "envelope:"+envelopeID))
	switch cb.Type {
	case slack.InteractionTypeBlockActions:
		return fromBlockActions(cb, team, id, signer)
	case slack.InteractionTypeViewSubmission:
		return fromViewSubmission(cb, team, id, signer)
	case slack.InteractionTypeMessageAction:
		return fromMessageShortcut(cb, team, id)
	}
	return it, false, dropInteraction
}

// fromBlockActions reads a click of one of the bot's buttons or menus (block_actions)
// in workspace team: an action input with id, a modal to open, a feedback click or a
// Retry of a command, as fromInteraction says.
func fromBlockActions(cb slack.InteractionCallback, team, id string, signer *Signer) (it interaction, ok bool, reason string) {
	if cb.Container.Type == "view" {
		return it, false, dropViewAction
	}
	var value string
	found := false
	for _, a := range cb.ActionCallback.BlockActions {
		if strings.HasPrefix(a.ActionID, actionIDPrefix) {
			value, found = cmp.Or(a.Value, a.SelectedOption.Value), true
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
			Action: action, UserID: cb.User.ID, MessageTS: cmp.Or(cb.Container.MessageTs, cb.Message.Timestamp),
		},
	}}, true, ""
}

// fromViewSubmission reads the submission of a modal (view_submission) in workspace
// team: the feedback reason modal's, or an action input with id (the id of the view
// when there is no trigger_id) carrying the modal's values, or the errors to show
// under its inputs.
func fromViewSubmission(cb slack.InteractionCallback, team, id string, signer *Signer) (it interaction, ok bool, reason string) {
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
}

// fromMessageShortcut reads the bot's message shortcut (message_action) in workspace
// team: a command input with id for the thread of the message it was used on.
func fromMessageShortcut(cb slack.InteractionCallback, team, id string) (it interaction, ok bool, reason string) {
	if cb.CallbackID != ShortcutCallbackID {
		return it, false, dropUnknownCallback
	}
	ts := cmp.Or(cb.MessageTs, cb.Message.Timestamp)
	if cb.Channel.ID == "" || cb.User.ID == "" || ts == "" {
		return it, false, dropNoTarget
	}
	return interaction{input: conversation.Input{
		ID:   id,
		Key:  conversation.Key{TeamID: team, ChannelID: cb.Channel.ID, ThreadTS: cmp.Or(cb.Message.ThreadTimestamp, ts)},
		Kind: conversation.KindCommand,
		Command: &conversation.CommandInput{
			Source: conversation.SourceShortcut, UserID: cb.User.ID, MessageTS: ts,
		},
	}}, true, ""
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

// inputFromSlashCommand turns a slash command (/threadwright start proposal) into a
// KindCommand input whose Key has no ThreadTS: the conversation layer resolves the
// thread (Slack does not deliver slash commands typed in threads).
func inputFromSlashCommand(cmd slack.SlashCommand, me Identity, envelopeID string) (conversation.Input, bool, string) {
	team := cmp.Or(cmd.TeamID, me.TeamID)
	if cmd.ChannelID == "" || cmd.UserID == "" || team == "" {
		return conversation.Input{}, false, dropNoTarget
	}
	return conversation.Input{
		ID:   conversation.InteractionInputID(team, cmp.Or(cmd.TriggerID, "envelope:"+envelopeID)),
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
	title := cmp.Or(truncate(oneLine(m.Title), maxModalTitleChars), "threadwright")
	submit := cmp.Or(truncate(oneLine(m.Submit), maxModalButtonChars), "Submit")
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
	label := cmp.Or(truncate(strings.TrimSpace(m.Label), maxInputLabelChars), title)
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
		label := cmp.Or(truncate(strings.TrimSpace(f.Label), maxInputLabelChars), f.ID)
		id := fieldBlockPrefix + m.Lang + "." + fieldFlags(f) + "." + f.ID
		in := slack.NewInputBlock(id, slack.NewTextBlockObject(slack.PlainTextType, label, false, false), nil, el)
		in.Optional = !f.Required
		blocks = append(blocks, in)
	}
	return blocks
}

// fieldValues reads the fields of a submitted modal that fieldBlocks made: their
// values by field id (trimmed), and what render.FieldError finds wrong by
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
		if msg := render.FieldError(parts[0], f, value); msg != "" {
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
