package assistant

import (
	"context"
	"errors"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/turns"
)

// Edits and deletions (docs/architecture.md, "Edits and deletions"): a person's
// edit or deletion of their message is an input of its own (KindEdit, KindDelete),
// stored through the same intake and run in thread order. While the edited or
// deleted message's own input waits, the intake amended it already (Store.Amend):
// the turn answers the edited text, or the deleted message is not answered. What
// is left runs here.

// Texts that stand in the stored history for what a person changed: the model sees
// that a message was edited or deleted, never a deleted message's text.
const (
	// EditedNote follows the text of an edited message that is not answered again.
	EditedNote = " (edited)"
	// DeletedText replaces the text of a deleted message.
	DeletedText = "(message deleted)"
)

// MessageChanged runs an edit or a deletion of a person's message. An edit of the
// thread's latest answered question is answered again, the answer replacing the
// earlier one in place (chat.update) and marked as edited; an older edit is noted in
// the history, not answered; an edit the history already holds (the turn answered
// the edited text) changes nothing. A deletion replaces the message's stored text
// with DeletedText, and drops the summary when the message was folded into it, so
// that no later turn gives the model the deleted text.
func (s *Handler) MessageChanged(ctx context.Context, r *turns.Run) error {
	msg := r.In.Message
	cp, err := r.Load(ctx)
	if errors.Is(err, conversation.ErrNotFound) {
		return r.Drop(ctx, conversation.InputDone) // its thread was never the bot's, or its only input was dropped
	}
	if err != nil {
		return err
	}
	st := cp.Conversation.State
	i := userMessageAt(cp.Messages, msg.TS)
	if r.In.Kind == conversation.KindDelete {
		if i < 0 && msg.UserID == "" {
			return r.Drop(ctx, conversation.InputDone) // not a person's message the history holds (its author unknown)
		}
		folded := st.Summary != "" && (i < 0 || cp.Messages[i].Seq <= st.SummaryThroughSeq)
		r.RewriteMessages(conversation.MessageRewrite{SlackTS: msg.TS, Text: DeletedText})
		r.Log.Info("message deleted: its text leaves the history", "summary_dropped", folded)
		return s.noteChange(ctx, r, cp, func(st *conversation.State) {
			if folded {
				st.Summary = ""
			}
			if st.Retry != nil && st.Retry.Message != nil && st.Retry.Message.TS == msg.TS {
				st.Retry = nil // nothing to answer again
			}
		})
	}
	if i >= 0 && cp.Messages[i].Text == msg.Text {
		return r.Drop(ctx, conversation.InputDone) // answered in its edited form
	}
	if answerTS := latestAnswer(cp.Messages, i); answerTS != "" && i >= 0 && cp.Messages[i].Seq > st.SummaryThroughSeq &&
		st.Workflow == nil && st.ToolApproval == nil {
		return s.answerEdited(ctx, r, cp, answerTS)
	}
	r.RewriteMessages(conversation.MessageRewrite{SlackTS: msg.TS, Text: msg.Text + EditedNote})
	return s.noteChange(ctx, r, cp, nil)
}

// answerEdited answers the edited question again, in place of its answer at
// answerTS, with the history before it; the question's stored text becomes the
// edited one.
func (s *Handler) answerEdited(ctx context.Context, r *turns.Run, cp *conversation.Checkpoint, answerTS string) error {
	msg := r.In.Message
	r.Log.Info("the latest question was edited: answering it again in place", "answer_ts", answerTS)
	r.RewriteMessages(conversation.MessageRewrite{SlackTS: msg.TS, Text: msg.Text})
	r.Out.ReviseAnswer(answerTS)
	s.cfg.compact(ctx, r.Log, cp)
	prompt := s.againPrompt(r.In.Key, cp, *msg)
	prompt.Viewing = s.viewing(ctx, r, cp) // the agent view's, as the first answer's
	return s.respond(ctx, r, cp, prompt, nil)
}

// noteChange saves the run's rewrites of the history without a reply, keeping the
// thread's Retry unless update changes it.
func (s *Handler) noteChange(ctx context.Context, r *turns.Run, cp *conversation.Checkpoint, update func(*conversation.State)) error {
	fctx, cancel := r.Final(ctx)
	defer cancel()
	return r.Finish(fctx, cp.Conversation, turns.Ending{Rebase: true, Update: func(st *conversation.State) {
		st.Retry = cp.Conversation.State.Retry // an edit is no new turn of the thread
		if update != nil {
			update(st)
		}
	}})
}

// userMessageAt returns the index of the person's message at ts in msgs, or -1.
func userMessageAt(msgs []conversation.Message, ts string) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].SlackTS == ts && (msgs[i].Role == conversation.RoleUser || msgs[i].Role == conversation.RoleContext) {
			return i
		}
	}
	return -1
}

// latestAnswer returns the ts of the bot's answer to msgs[i] when msgs[i] is the
// thread's latest person's message and was answered: the last assistant message
// after it that was posted. It returns "" otherwise.
func latestAnswer(msgs []conversation.Message, i int) string {
	if i < 0 || msgs[i].Role != conversation.RoleUser {
		return ""
	}
	ts := ""
	for _, m := range msgs[i+1:] {
		switch m.Role {
		case conversation.RoleUser:
			return "" // a newer question
		case conversation.RoleAssistant:
			if m.SlackTS != "" {
				ts = m.SlackTS
			}
		}
	}
	return ts
}
