package assistant

import (
	"context"
	"errors"
	"slices"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/render"
	"github.com/threadwright/threadwright/conversation/turns"
)

// answerLang is the language of the failure texts about the answer to in's message.
func answerLang(in *conversation.Input) string {
	if in == nil || in.Message == nil {
		return "en"
	}
	return render.UILang(render.TextLocale(in.Message.Text))
}

// answerFailed ends an assistant turn that could not answer: its failure message
// (text) is posted with a Retry button that answers the message of failed again
// (State.Retry), in place of the messages the turn streamed (streamTS, oldest first). It returns
// the posted message's ts ("" when Slack refused it too: the caller posts the text
// as a plain reply).
func (s *Handler) answerFailed(ctx context.Context, r *turns.Run, text string, failed *conversation.Input, streamTS []string) (string, error) {
	c := render.Cards{Lang: answerLang(failed), Key: r.In.Key}
	card := c.Failed(text, failed.ID)
	ts, err := r.Out.PostCardReplacing(ctx, card, streamTS)
	if errors.Is(err, conversation.ErrLeaseLost) {
		return "", err
	}
	if err != nil {
		r.Log.Error("failure message with Retry not posted", "error", err)
		return "", nil
	}
	return ts, nil
}

// retryOf returns the input a failed assistant turn of r offers to run again: r's
// message (a Retry's turn runs under the click's id, so an older failure's button is
// out of date), or nil for a turn that cannot run again as it was (a resumed tool
// confirmation).
func retryOf(r *turns.Run) *conversation.Input {
	if r.In.Kind != conversation.KindUserMessage || r.In.Message == nil {
		return nil
	}
	in := r.In
	in.Attempts, in.Status, in.Action = 0, "", nil
	// A merged burst (docs/architecture.md, "Double texting") is answered again
	// whole; its messages are done, saved with the failed turn.
	in.Burst = slices.Clone(in.Burst)
	for i := range in.Burst {
		in.Burst[i].Attempts, in.Burst[i].Status, in.Burst[i].Burst = 0, conversation.InputDone, nil
	}
	return &in
}
