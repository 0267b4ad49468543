package assistant

import (
	"context"
	"errors"
	"strings"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/history"
	"github.com/threadwright/threadwright/conversation/render"
	"github.com/threadwright/threadwright/conversation/turns"
)

// Retry of an answer (docs/workflows.md, "Failures and Retry"): when the assistant could not
// answer a person's message (the model was down past its retries or answered
// nothing usable, the turn ran out of time, Slack refused the answer; a tool's error
// goes back to the model and ends nothing), the failure message carries a Retry
// button and
// the message's input is kept in the checkpoint (State.Retry). A click on it is an
// input of its own, run in thread order on whichever replica holds the thread: it
// answers that message again, through the same pipeline, in place of the failed
// turn. Any later turn of the thread clears State.Retry (finishTurn), so a click on
// an older failure's Retry is refused, and so is a second click on the same one.

// Retry runs a Retry click. A click on the Retry of a failed answer answers that
// message again; a workflow step's Retry goes to the workflow turn (conversation/workflowrun/turn.go,
// runRetry), which also refuses an out-of-date click in a workflow thread. handled is
// false when the click is not for an answer.
func (s *Handler) Retry(ctx context.Context, r *turns.Run) (handled bool, err error) {
	click := r.In.Action
	cp, err := r.Load(ctx)
	if errors.Is(err, conversation.ErrNotFound) {
		s.retryGone(ctx, r, "en")
		return true, r.Drop(ctx, conversation.InputDone)
	}
	if err != nil {
		return true, err
	}
	st := cp.Conversation.State
	orig := st.Retry
	switch {
	case orig != nil && orig.Kind == conversation.KindUserMessage && orig.Message != nil && orig.ID == click.Action.Arg && click.Action.Artifact == "":
	case st.Workflow != nil:
		return false, nil // a workflow thread: its turn runs the step again, or refuses
	default:
		s.retryGone(ctx, r, answerLang(orig))
		return true, r.Drop(ctx, conversation.InputDone) // nothing changes: no save
	}
	s.cfg.compact(ctx, r.Log, cp)
	again := *r
	// A merged burst's Retry answers all of its messages (their inputs are done:
	// Input.BurstIDs leaves them out of the save).
	again.In.Kind, again.In.Message, again.In.Burst = conversation.KindUserMessage, orig.Message, orig.Burst
	msg := orig.Message
	if msg.Direct && msg.ThreadTS == msg.TS && st.Assistant == nil {
		r.Out.SetBroadcast() // as the first answer was (docs/tools.md, "Assistant view")
	}
	s.closeRetriedAnswer(ctx, r, render.UILang(render.TextLocale(msg.Text)))
	prompt := s.againPrompt(r.In.Key, cp, again.In.BurstMessages()...)
	prompt.Viewing = s.viewing(ctx, &again, cp) // the agent view's, as the first answer's
	return true, s.respond(ctx, &again, cp, prompt, nil)
}

// againPrompt is the prompt that answers msgs, a person's messages the thread holds
// (one, or a merged burst's, oldest first), again (a Retry, an edit): the history
// before the first, the texts asked as one, and the state of cp, compacted.
func (s *Handler) againPrompt(key conversation.Key, cp *conversation.Checkpoint, msgs ...conversation.UserMessage) conversation.Prompt {
	st := cp.Conversation.State
	texts := make([]string, len(msgs))
	for i, m := range msgs {
		texts[i] = m.Text
	}
	return conversation.Prompt{
		Key:              key,
		Summary:          st.Summary,
		History:          s.cfg.clipAll(history.Dialogue(before(cp.Messages, msgs[0].TS))),
		UserID:           msgs[0].UserID,
		Text:             history.Clip(strings.Join(texts, "\n"), s.cfg.MaxPromptChars),
		Entities:         st.Entities,
		Focus:            st.Focus,
		ContextChannelID: contextChannel(st),
	}
}

// before returns the messages before the person's message at ts (the one answered
// again: its failed answer and it are not history), or all of them when it is not
// among them (folded into the summary).
func before(msgs []conversation.Message, ts string) []conversation.Message {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == conversation.RoleUser && msgs[i].SlackTS == ts {
			return msgs[:i:i]
		}
	}
	return msgs
}

// retryGone tells the person who clicked an out-of-date Retry that it is no longer
// available.
func (s *Handler) retryGone(ctx context.Context, r *turns.Run, lang string) {
	a := r.In.Action
	if err := s.cfg.Messenger.PostEphemeral(ctx, r.In.Key, a.UserID, render.Tr(lang, "retry.gone")); err != nil {
		r.Log.Warn("ephemeral not posted", "error", err)
	}
}

// closeRetriedAnswer replaces the failure message clicked with a note of who retried
// (the click does not carry its text); the new answer follows below it.
func (s *Handler) closeRetriedAnswer(ctx context.Context, r *turns.Run, lang string) {
	a := r.In.Action
	if a.MessageTS == "" || r.Out.Lost() {
		return
	}
	note := "↻ " + render.Tr(lang, "retried_by", a.UserID)
	if err := s.cfg.Messenger.UpdateCard(ctx, r.In.Key, a.MessageTS, render.NoteCard(note)); err != nil {
		r.Log.Warn("failure message not closed", "error", err)
	}
}
