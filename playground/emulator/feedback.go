package emulator

import (
	"encoding/json"
	"fmt"
)

// Feedback buttons: a context_actions block
// (https://docs.slack.dev/reference/block-kit/blocks/context-actions-block) holding a
// feedback_buttons element
// (https://docs.slack.dev/reference/block-kit/block-elements/feedback-buttons-element),
// the thumbs up and down Slack shows under an AI app's answers.

// Limits of the context_actions block and the feedback buttons.
const (
	maxContextActionsElements = 5
	maxAccessibilityLabel     = 75
)

// feedbackButton is one button of a feedback_buttons element.
type feedbackButton struct {
	Text               *textObject `json:"text"`
	Value              string      `json:"value"`
	AccessibilityLabel string      `json:"accessibility_label"`
}

// feedbackButtons is a feedback_buttons element.
type feedbackButtons struct {
	Type     string          `json:"type"`
	ActionID string          `json:"action_id"`
	Positive *feedbackButton `json:"positive_button"`
	Negative *feedbackButton `json:"negative_button"`
}

// checkContextActions lists what Slack refuses in the elements of the
// context_actions block at: more than 5, an element that is neither
// feedback_buttons nor icon_button, a feedback_buttons without both buttons, a
// button without a plain_text text or a value, a value over 2,000 characters or an
// accessibility_label over 75.
func checkContextActions(elements []json.RawMessage, at string) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	if len(elements) == 0 {
		add("must provide at least 1 items [json-pointer:%s/elements]", at)
	}
	if len(elements) > maxContextActionsElements {
		add("no more than %d items allowed [json-pointer:%s/elements]", maxContextActionsElements, at)
	}
	for j, raw := range elements {
		elAt := fmt.Sprintf("%s/elements/%d", at, j)
		var el feedbackButtons
		if err := json.Unmarshal(raw, &el); err != nil {
			add("must be an object [json-pointer:%s]", elAt)
			continue
		}
		switch el.Type {
		case "icon_button":
			continue
		case "feedback_buttons":
		default:
			add("must be one of feedback_buttons, icon_button [json-pointer:%s/type]", elAt)
			continue
		}
		if runes(el.ActionID) > maxActionIDLength {
			add("must be less than %d characters [json-pointer:%s/action_id]", maxActionIDLength+1, elAt)
		}
		for _, b := range []struct {
			name string
			b    *feedbackButton
		}{{"positive_button", el.Positive}, {"negative_button", el.Negative}} {
			bAt := elAt + "/" + b.name
			switch {
			case b.b == nil:
				add("missing required field: %s [json-pointer:%s]", b.name, bAt)
				continue
			case b.b.Text == nil || b.b.Text.Type != "plain_text":
				add("must be a plain_text object [json-pointer:%s/text]", bAt)
			case runes(b.b.Text.Text) > maxButtonTextLength:
				add("must be less than %d characters [json-pointer:%s/text/text]", maxButtonTextLength+1, bAt)
			}
			if b.b.Value == "" {
				add("missing required field: value [json-pointer:%s/value]", bAt)
			}
			if runes(b.b.Value) > maxButtonValueLength {
				add("must be less than %d characters [json-pointer:%s/value]", maxButtonValueLength+1, bAt)
			}
			if runes(b.b.AccessibilityLabel) > maxAccessibilityLabel {
				add("must be less than %d characters [json-pointer:%s/accessibility_label]", maxAccessibilityLabel+1, bAt)
			}
		}
	}
	return problems
}

// feedbackButtonsOf returns the first feedback_buttons element of blocks, with its
// block's block_id ("block<i>" when it has none, as elementsOf names them).
func feedbackButtonsOf(blocks json.RawMessage) (feedbackButtons, string, bool) {
	var bs []struct {
		Type     string            `json:"type"`
		BlockID  string            `json:"block_id"`
		Elements []json.RawMessage `json:"elements"`
	}
	if json.Unmarshal(blocks, &bs) != nil {
		return feedbackButtons{}, "", false
	}
	for i, b := range bs {
		if b.Type != "context_actions" {
			continue
		}
		for _, raw := range b.Elements {
			var el feedbackButtons
			if json.Unmarshal(raw, &el) == nil && el.Type == "feedback_buttons" && el.Positive != nil && el.Negative != nil {
				id := b.BlockID
				if id == "" {
					id = fmt.Sprintf("block%d", i)
				}
				return el, id, true
			}
		}
	}
	return feedbackButtons{}, "", false
}

// HasFeedbackButtons reports whether the message ts in channel, as user sees it,
// carries feedback buttons.
func (s *Server) HasFeedbackButtons(channel, ts, user string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _, m, _, err := s.messageForLocked(channel, ts, user)
	if err != nil {
		return false
	}
	_, _, ok := feedbackButtonsOf(m.Blocks)
	return ok
}

// clickFeedbackLocked sends the click of the feedback button of m with value (the
// playground's click); ok is false when m has no such feedback button.
func (s *Server) clickFeedbackLocked(ch *channelState, u User, m *record, ephemeral bool, actionID, value string) (string, bool, error) {
	el, blockID, found := feedbackButtonsOf(m.Blocks)
	if !found || el.ActionID != actionID {
		return "", false, nil
	}
	for _, b := range []*feedbackButton{el.Positive, el.Negative} {
		if b.Value == value {
			id, err := s.blockActionLocked(ch, u, m, ephemeral, feedbackAction(el, blockID, b), nil)
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
func (s *Server) ClickFeedback(channel, ts, user string, positive bool) (envelopeID string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch, u, m, ephemeral, err := s.messageForLocked(channel, ts, user)
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
	return s.blockActionLocked(ch, u, m, ephemeral, feedbackAction(el, blockID, b), nil)
}
