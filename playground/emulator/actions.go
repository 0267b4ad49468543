package emulator

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// block_actions (https://docs.slack.dev/reference/interaction-payloads/block_actions-payload):
// a person clicks a button, a feedback button or a menu option of a message.

// blockActions acts as the people who use the Block Kit elements of the bot's
// messages, and lists those elements for tests.
type blockActions struct {
	ws *workspace
	in *interactivity
}

// Errors of ClickButton, ClickButtonByLabel and ChooseMenuItem.
var (
	// ErrActionNotFound means the message has no such button or menu item.
	ErrActionNotFound = errors.New("emulator: button not found")
	// ErrAmbiguousLabel means several buttons of the message have the label.
	ErrAmbiguousLabel = errors.New("emulator: several buttons have this label")
)

// ClickButton acts as user clicking the button with actionID on the
// message ts in channel (a visible message, or an ephemeral one shown to
// user): the bot receives an interactive envelope with a block_actions
// payload (https://docs.slack.dev/reference/interaction-payloads/block_actions-payload)
// carrying the button's value, a trigger_id and a response_url on the
// emulator. It returns the envelope's ID.
func (a *blockActions) ClickButton(channel, ts, user, actionID string) (envelopeID string, err error) {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	ch, u, m, ephemeral, err := a.messageForLocked(channel, ts, user)
	if err != nil {
		return "", err
	}
	for _, el := range elementsOf(m.Blocks) {
		if el.Type == "button" && el.ActionID == actionID {
			return a.blockActionLocked(ch, u, m, ephemeral, el.buttonAction(), nil)
		}
	}
	return "", fmt.Errorf("%s in %s/%s: %w", actionID, channel, ts, ErrActionNotFound)
}

// ClickOld acts as user clicking b, a button listed earlier by Buttons on the message
// ts, as it was drawn then, even if the message has changed since: what the second
// click of a double click delivers, or a click in a client still showing an older
// version of the message. The payload is ClickButton's, carrying b's value.
func (a *blockActions) ClickOld(channel, ts, user string, b Button) (envelopeID string, err error) {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	ch, u, m, ephemeral, err := a.messageForLocked(channel, ts, user)
	if err != nil {
		return "", err
	}
	text, _ := json.Marshal(object{"type": "plain_text", "text": b.Label, "emoji": true})
	el := element{Type: "button", ActionID: b.ActionID, BlockID: b.BlockID, Text: text, Value: b.Value, Style: b.Style}
	return a.blockActionLocked(ch, u, m, ephemeral, el.buttonAction(), nil)
}

// ClickButtonByLabel is ClickButton for the button whose text is label
// (compared after trimming spaces). The error lists the message's button
// labels when none matches, and their action_ids when several do (then use
// Buttons to choose one and ClickButton to click it).
func (a *blockActions) ClickButtonByLabel(channel, ts, user, label string) (envelopeID string, err error) {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	ch, u, m, ephemeral, err := a.messageForLocked(channel, ts, user)
	if err != nil {
		return "", err
	}
	var found []element
	var labels []string
	for _, el := range elementsOf(m.Blocks) {
		if el.Type != "button" {
			continue
		}
		labels = append(labels, strconv.Quote(el.label()))
		if strings.TrimSpace(el.label()) == strings.TrimSpace(label) {
			found = append(found, el)
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("button %q in %s/%s (buttons: %s): %w", label, channel, ts, strings.Join(labels, ", "), ErrActionNotFound)
	case 1:
		return a.blockActionLocked(ch, u, m, ephemeral, found[0].buttonAction(), nil)
	default:
		ids := make([]string, len(found))
		for i, el := range found {
			ids[i] = el.ActionID
		}
		return "", fmt.Errorf("%d buttons %q in %s/%s (action_ids %s): %w", len(found), label, channel, ts, strings.Join(ids, ", "), ErrAmbiguousLabel)
	}
}

// ChooseMenuItem acts as user choosing the option whose text is label in an
// overflow menu or a static select menu of the message ts (a visible
// message, or an ephemeral one shown to user): the bot receives a
// block_actions payload whose action carries selected_option (and, for a
// static select, the menu's state in state.values), as Slack sends it. The
// error lists the menus' options when none matches.
func (a *blockActions) ChooseMenuItem(channel, ts, user, label string) (envelopeID string, err error) {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	ch, u, m, ephemeral, err := a.messageForLocked(channel, ts, user)
	if err != nil {
		return "", err
	}
	var labels []string
	for _, el := range elementsOf(m.Blocks) {
		if el.Type != "overflow" && el.Type != "static_select" {
			continue
		}
		for _, opt := range el.options() {
			labels = append(labels, strconv.Quote(opt.Text.Text))
			if strings.TrimSpace(opt.Text.Text) != strings.TrimSpace(label) {
				continue
			}
			action, state := el.menuAction(opt)
			return a.blockActionLocked(ch, u, m, ephemeral, action, state)
		}
	}
	return "", fmt.Errorf("menu item %q in %s/%s (items: %s): %w", label, channel, ts, strings.Join(labels, ", "), ErrActionNotFound)
}

// menuAction renders the choice of opt in an overflow or static select menu
// as a block_actions action carrying selected_option, and, for a static
// select, the menu's state for state.values.
func (el element) menuAction(opt option) (action, state object) {
	selected := object{"text": opt.Text, "value": opt.Value}
	action = object{"type": el.Type, "action_id": el.ActionID, "block_id": el.BlockID, "selected_option": selected}
	if el.Type == "static_select" {
		if len(el.Placeholder) > 0 {
			action["placeholder"] = el.Placeholder
		}
		state = object{el.BlockID: object{el.ActionID: object{"type": el.Type, "selected_option": selected}}}
	}
	return action, state
}

// Button is an interactive element of a message, as Buttons lists it.
type Button struct {
	Type     string // "button", or "overflow" / "static_select" for a menu's option
	Label    string // the button's (or option's) text
	ActionID string
	Value    string
	Style    string
	BlockID  string
	// Context is the text of the nearest section, context or header block above
	// the element, to tell apart buttons with the same label.
	Context string
}

// Buttons lists the buttons and menu options of the message ts in channel
// (a visible message, or an ephemeral one shown to user), in order.
func (a *blockActions) Buttons(channel, ts, user string) ([]Button, error) {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	_, _, m, _, err := a.messageForLocked(channel, ts, user)
	if err != nil {
		return nil, err
	}
	var out []Button
	for _, el := range elementsOf(m.Blocks) {
		switch el.Type {
		case "button":
			out = append(out, Button{Type: el.Type, Label: el.label(), ActionID: el.ActionID, Value: el.Value, Style: el.Style, BlockID: el.BlockID, Context: el.context})
		case "overflow", "static_select":
			for _, opt := range el.options() {
				out = append(out, Button{Type: el.Type, Label: opt.Text.Text, ActionID: el.ActionID, Value: opt.Value, BlockID: el.BlockID, Context: el.context})
			}
		}
	}
	return out, nil
}

// messageForLocked finds the message ts of channel as user sees it: a visible
// message, or an ephemeral one shown to user.
func (a *blockActions) messageForLocked(channel, ts, user string) (*channelState, User, *record, bool, error) {
	ch, u, err := a.ws.channelAndUserLocked(channel, user)
	if err != nil {
		return nil, u, nil, false, err
	}
	if m := ch.find(ts); m != nil {
		return ch, u, m, false, nil
	}
	if e := ch.ephemeral(ts, user); e != nil {
		return ch, u, e, true, nil
	}
	return nil, u, nil, false, fmt.Errorf("%s/%s: %w", channel, ts, ErrMessageNotFound)
}

// blockActionLocked sends the block_actions payload of user acting on m with
// action; state holds the state.values of the message's inputs.
func (a *blockActions) blockActionLocked(ch *channelState, u User, m *record, ephemeral bool, action, state object) (string, error) {
	action["action_ts"] = formatTS(a.ws.cfg.Now().UnixMicro())
	if state == nil {
		state = object{}
	}
	container := object{"type": "message", "message_ts": m.TS, "channel_id": ch.ID, "is_ephemeral": ephemeral}
	if m.ThreadTS != "" {
		container["thread_ts"] = m.ThreadTS
	}
	payload := object{
		"type":                  "block_actions",
		"user":                  a.in.userObject(u),
		"api_app_id":            a.ws.cfg.AppID,
		"token":                 a.ws.cfg.VerificationToken,
		"container":             container,
		"trigger_id":            a.in.newTriggerLocked(u.ID),
		"team":                  a.in.teamObject(),
		"enterprise":            nil,
		"is_enterprise_install": false,
		"channel":               object{"id": ch.ID, "name": ch.Name},
		"state":                 object{"values": state},
		"response_url": a.in.newResponseURLLocked(responseTarget{
			channel: ch.ID, user: u.ID, messageTS: m.TS, ephemeral: ephemeral, threadTS: m.ThreadTS,
		}),
		"actions": []object{action},
	}
	if !ephemeral {
		payload["message"] = a.ws.wireLocked(ch, m)
	}
	return a.in.sendLocked(EnvelopeInteractive, payload, nil)
}

// buttonAction renders a button as a block_actions action.
func (el element) buttonAction() object {
	action := object{
		"type":      "button",
		"action_id": el.ActionID,
		"block_id":  el.BlockID,
		"text":      el.Text,
		"value":     el.Value,
	}
	if el.Style != "" {
		action["style"] = el.Style
	}
	return action
}

// HasFeedbackButtons reports whether the message ts in channel, as user sees it,
// carries feedback buttons.
func (a *blockActions) HasFeedbackButtons(channel, ts, user string) bool {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	_, _, m, _, err := a.messageForLocked(channel, ts, user)
	if err != nil {
		return false
	}
	_, _, ok := feedbackButtonsOf(m.Blocks)
	return ok
}

// clickFeedbackLocked sends the click of the feedback button of m with value (the
// playground's click); ok is false when m has no such feedback button.
func (a *blockActions) clickFeedbackLocked(ch *channelState, u User, m *record, ephemeral bool, actionID, value string) (string, bool, error) {
	el, blockID, found := feedbackButtonsOf(m.Blocks)
	if !found || el.ActionID != actionID {
		return "", false, nil
	}
	for _, b := range []*feedbackButton{el.Positive, el.Negative} {
		if b.Value == value {
			id, err := a.blockActionLocked(ch, u, m, ephemeral, feedbackAction(el, blockID, b), nil)
			return id, true, err
		}
	}
	return "", false, nil
}

// feedbackAction is the block_actions action of a click on b, a button of el.
func feedbackAction(el feedbackButtons, blockID string, b *feedbackButton) object {
	return object{"type": "feedback_buttons", "action_id": el.ActionID, "block_id": blockID, "value": b.Value, "text": b.Text}
}

// ClickFeedback acts as user clicking the thumbs up (positive) or down of the
// feedback buttons on the message ts in channel: the bot receives a block_actions
// payload whose action has type feedback_buttons, the element's action_id and the
// clicked button's value and text (bot/testdata/feedback_block_actions.json shows
// Slack's), with a trigger_id. It returns the envelope's ID. Errors:
// ErrMessageNotFound; ErrActionNotFound when the message has no feedback buttons.
func (a *blockActions) ClickFeedback(channel, ts, user string, positive bool) (envelopeID string, err error) {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	ch, u, m, ephemeral, err := a.messageForLocked(channel, ts, user)
	if err != nil {
		return "", err
	}
	el, blockID, ok := feedbackButtonsOf(m.Blocks)
	if !ok {
		return "", fmt.Errorf("feedback buttons in %s/%s: %w", channel, ts, ErrActionNotFound)
	}
	b := el.Negative
	if positive {
		b = el.Positive
	}
	return a.blockActionLocked(ch, u, m, ephemeral, feedbackAction(el, blockID, b), nil)
}

// clickLocked is the playground's click on the message ts: the button
// actionID (with value, when given, among the buttons of that action_id) or
// the feedback button of that value.
func (a *blockActions) clickLocked(channel, ts, user, actionID, value string) (string, error) {
	ch, u, m, ephemeral, err := a.messageForLocked(channel, ts, user)
	if err != nil {
		return "", err
	}
	for _, el := range elementsOf(m.Blocks) {
		if el.ActionID == actionID && el.Type == "button" && (value == "" || value == el.Value) {
			return a.blockActionLocked(ch, u, m, ephemeral, el.buttonAction(), nil)
		}
	}
	if id, ok, err := a.clickFeedbackLocked(ch, u, m, ephemeral, actionID, value); ok {
		return id, err
	}
	return "", fmt.Errorf("button %s in %s/%s: %w", actionID, channel, ts, ErrActionNotFound)
}

// chooseLocked is the playground's choice in a menu of the message ts: the
// option with value (or else label) of the overflow or static select menu
// actionID.
func (a *blockActions) chooseLocked(channel, ts, user, actionID, value, label string) (string, error) {
	ch, u, m, ephemeral, err := a.messageForLocked(channel, ts, user)
	if err != nil {
		return "", err
	}
	for _, el := range elementsOf(m.Blocks) {
		if el.ActionID != actionID || el.Type != "overflow" && el.Type != "static_select" {
			continue
		}
		for _, opt := range el.options() {
			if value != "" && opt.Value == value || value == "" && strings.TrimSpace(opt.Text.Text) == strings.TrimSpace(label) {
				action, state := el.menuAction(opt)
				return a.blockActionLocked(ch, u, m, ephemeral, action, state)
			}
		}
	}
	return "", fmt.Errorf("menu option %s in %s/%s: %w", actionID, channel, ts, ErrActionNotFound)
}
