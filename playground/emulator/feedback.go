package emulator

import (
	"fmt"
)

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
