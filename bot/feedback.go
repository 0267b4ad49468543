package bot

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"github.com/threadwright/threadwright/conversation"
)

// Feedback buttons (docs/operations.md, "Feedback"): the last message of every assistant answer
// ends with a context_actions block holding a feedback_buttons element
// (https://docs.slack.dev/reference/block-kit/blocks/context-actions-block and
// .../block-elements/feedback-buttons-element; bot/testdata/feedback_block.json).
// Each button's value is the signed conversation.Action ActionFeedback whose Arg is
// the conversation.Rating, encoded as any other button's (encodeValue), so a forged
// click is refused like any other. A click arrives as a block_actions payload whose
// action has type feedback_buttons and the clicked button's value
// (bot/testdata/feedback_block_actions.json); the Bot stores it (Config.Feedback)
// before it acks the envelope. A thumbs down then opens a modal for an optional
// reason, whose private_metadata is the action with the message's ts, signed again.

// FeedbackActionID is the action_id of the feedback_buttons element.
const FeedbackActionID = actionIDPrefix + "feedback"

// FeedbackCallbackID is the callback_id of the reason modal of a thumbs down.
const FeedbackCallbackID = "tw_feedback"

// The feedback buttons' texts and accessibility labels (at most 75 characters).
const (
	feedbackPositiveText  = "Good answer"
	feedbackNegativeText  = "Bad answer"
	feedbackPositiveLabel = "Mark this answer as helpful"
	feedbackNegativeLabel = "Mark this answer as not helpful, and optionally say why"
)

// The reason modal's texts.
const (
	feedbackModalTitle = "What went wrong?"
	feedbackModalLabel = "What was wrong or missing in the answer?" // Slack marks an optional input itself
	feedbackModalHint  = "For example: wrong facts, out of date, did not answer the question"
	feedbackModalSend  = "Send"
	feedbackBlockID    = "tw_feedback_reason"
)

// FeedbackRecorder stores feedback on answers (conversation.FeedbackLog implements
// it). Record is called before the click's envelope is acked, within the ack budget.
type FeedbackRecorder interface {
	Record(ctx context.Context, f conversation.Feedback) error
}

// feedbackBlock returns the context_actions block with the feedback buttons of an
// answer in the thread of key, their actions signed by s. Errors: an action that
// cannot be encoded.
func (s *Signer) feedbackBlock(key conversation.Key) (*slack.ContextActionsBlock, error) {
	button := func(r conversation.Rating, text, label string) (*slack.FeedbackButton, error) {
		a, err := s.Sign(conversation.Action{Name: conversation.ActionFeedback, Channel: key.ChannelID, ThreadTS: key.ThreadTS, Arg: string(r)})
		if err != nil {
			return nil, err
		}
		v, err := encodeValue(a, nil, maxButtonValueChars)
		if err != nil {
			return nil, err
		}
		return slack.NewFeedbackButton(slack.NewTextBlockObject(slack.PlainTextType, text, true, false), v).WithAccessibilityLabel(label), nil
	}
	pos, err := button(conversation.RatingPositive, feedbackPositiveText, feedbackPositiveLabel)
	if err != nil {
		return nil, fmt.Errorf("feedback buttons: %w", err)
	}
	neg, err := button(conversation.RatingNegative, feedbackNegativeText, feedbackNegativeLabel)
	if err != nil {
		return nil, fmt.Errorf("feedback buttons: %w", err)
	}
	return slack.NewContextActionsBlock("", slack.NewFeedbackButtonsBlockElement(FeedbackActionID, pos, neg)), nil
}

// answerBlocks returns the blocks of an answer's last message: its text (mrkdwn)
// in section blocks, since a message with blocks shows them instead of its text,
// then fb.
func answerBlocks(text string, fb slack.Block) []slack.Block {
	var out []slack.Block
	for _, p := range SplitText(text, MaxSectionChars) {
		if strings.TrimSpace(p) == "" {
			continue
		}
		out = append(out, slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, p, false, false), nil, nil))
	}
	return append(out, fb)
}

// PostReply is Messenger.PostReply with the feedback buttons on the last message of
// an answer (tag.Answer and tag.Final) that is not a notice (tag.Notice). An answer
// whose buttons cannot be made is posted without them.
func (m *SigningMessenger) PostReply(ctx context.Context, key conversation.Key, text string, tag conversation.Tag) (string, error) {
	if !tag.Answer || !tag.Final || tag.Notice {
		return m.Messenger.PostReply(ctx, key, text, tag)
	}
	fb, err := m.signer.feedbackBlock(key)
	if err != nil {
		m.log.Warn("answer posted without feedback buttons", "error", err)
		return m.Messenger.PostReply(ctx, key, text, tag)
	}
	return m.Messenger.postReply(ctx, key, text, tag, func(last string) []slack.Block { return answerBlocks(last, fb) })
}

// StartStream is Messenger.StartStream whose answer, when its Stop is final, ends
// with the feedback buttons (chat.stopStream's blocks).
func (m *SigningMessenger) StartStream(ctx context.Context, key conversation.Key, userID string, tag conversation.Tag) (conversation.Stream, error) {
	st, err := m.Messenger.StartStream(ctx, key, userID, tag)
	if err != nil || !tag.Answer {
		return st, err
	}
	if s, ok := st.(*stream); ok {
		m.endWithFeedback(s, key)
	}
	return st, nil
}

// endWithFeedback makes s's final Stop add the answer's feedback buttons; an answer
// whose buttons cannot be made ends without them.
func (m *SigningMessenger) endWithFeedback(s *stream, key conversation.Key) {
	fb, err := m.signer.feedbackBlock(key)
	if err != nil {
		m.log.Warn("answer streamed without feedback buttons", "error", err)
		return
	}
	s.done = []slack.Block{fb}
}

// feedbackClick returns the feedback of a verified feedback click (action a, from a
// block_actions payload), and for a thumbs down the reason modal to open.
func feedbackClick(cb slack.InteractionCallback, a conversation.Action, team string, signer *Signer) (interaction, bool, string) {
	ts := cmp.Or(cb.Container.MessageTs, cb.Message.Timestamp)
	r := conversation.Rating(a.Arg)
	if !r.Valid() || ts == "" {
		return interaction{}, false, dropBadValue
	}
	fb := conversation.Feedback{Key: conversation.Key{TeamID: team, ChannelID: a.Channel, ThreadTS: a.ThreadTS},
		MessageTS: ts, UserID: cb.User.ID, Rating: r}
	it := interaction{feedback: &fb}
	if r == conversation.RatingNegative && cb.TriggerID != "" {
		view, err := feedbackModal(signer, a, ts)
		if err != nil {
			return interaction{}, false, dropBadValue
		}
		it.modal = &modalRequest{triggerID: cb.TriggerID, userID: cb.User.ID, action: a, view: view}
	}
	return it, true, ""
}

// feedbackModal builds the reason modal of a thumbs down on the message ts: one
// optional multiline input, and as private_metadata a (the verified button's
// action) with Arg "negative:<ts>", signed again.
func feedbackModal(signer *Signer, a conversation.Action, ts string) (slack.ModalViewRequest, error) {
	a.Arg = string(conversation.RatingNegative) + ":" + ts
	signed, err := signer.Sign(a)
	if err != nil {
		return slack.ModalViewRequest{}, err
	}
	meta, err := signed.Encode()
	if err != nil {
		return slack.ModalViewRequest{}, err
	}
	el := slack.NewPlainTextInputBlockElement(slack.NewTextBlockObject(slack.PlainTextType, feedbackModalHint, false, false), modalActionID)
	el.Multiline = true
	el.MaxLength = maxInputChars
	input := slack.NewInputBlock(feedbackBlockID, slack.NewTextBlockObject(slack.PlainTextType, feedbackModalLabel, false, false), nil, el)
	input.Optional = true
	return slack.ModalViewRequest{
		Type:            slack.VTModal,
		Title:           slack.NewTextBlockObject(slack.PlainTextType, feedbackModalTitle, false, false),
		Submit:          slack.NewTextBlockObject(slack.PlainTextType, feedbackModalSend, false, false),
		Blocks:          slack.Blocks{BlockSet: []slack.Block{input}},
		PrivateMetadata: meta,
		CallbackID:      FeedbackCallbackID,
	}, nil
}

// feedbackSubmission returns the feedback of the reason modal's submission: the
// thumbs down with the reason typed.
func feedbackSubmission(cb slack.InteractionCallback, team string, signer *Signer) (interaction, bool, string) {
	signed, err := conversation.DecodeAction(cb.View.PrivateMetadata)
	if err != nil {
		return interaction{}, false, dropBadValue
	}
	if cb.User.ID == "" {
		return interaction{}, false, dropNoTarget
	}
	a, reason := verify(signer, signed)
	if reason != "" {
		return interaction{}, false, reason
	}
	rating, ts, ok := strings.Cut(a.Arg, ":")
	if a.Name != conversation.ActionFeedback || conversation.Rating(rating) != conversation.RatingNegative || !ok || ts == "" {
		return interaction{}, false, dropBadValue
	}
	text := ""
	if cb.View.State != nil {
		text = strings.TrimSpace(cb.View.State.Values[feedbackBlockID][modalActionID].Value)
	}
	return interaction{feedback: &conversation.Feedback{Key: conversation.Key{TeamID: team, ChannelID: a.Channel, ThreadTS: a.ThreadTS},
		MessageTS: ts, UserID: cb.User.ID, Rating: conversation.RatingNegative, Reason: text}}, true, ""
}
