package bot_test

import (
	"context"
	"testing"

	"github.com/threadwright/threadwright/bot"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/playground/emulator"
)

// viewWaitingRecorder records feedback only once the clicker has a view open (the
// reason modal), failing when its context ends first: a store slower than the
// trigger_id's 3 s.
type viewWaitingRecorder struct {
	emu   *emulator.Server
	saved chan conversation.Feedback
}

func (r *viewWaitingRecorder) Record(ctx context.Context, f conversation.Feedback) error {
	if _, err := r.emu.WaitForView(ctx, f.UserID); err != nil {
		return err
	}
	r.saved <- f
	return nil
}

// TestThumbsDownModalOpensBeforeTheRecord: a thumbs down opens its reason modal
// before its feedback is stored, so that a slow store cannot make the modal's
// trigger_id expire (3 s after the click); the feedback is then stored, and the
// click acked.
func TestThumbsDownModalOpensBeforeTheRecord(t *testing.T) {
	rec := &viewWaitingRecorder{saved: make(chan conversation.Feedback, 1)}
	h := startBotWith(t, emulator.Config{}, func(c *bot.Config) { c.Feedback = rec })
	rec.emu = h.emu
	ctx := testContext(t)
	parent, err := h.emu.PostUserMessage("C0GENERAL", "U0ALICE", "<@U0BOT> what year?", "")
	if err != nil {
		t.Fatal(err)
	}
	h.next(t)
	key := conversation.Key{TeamID: h.me.TeamID, ChannelID: "C0GENERAL", ThreadTS: parent}
	answer, err := h.msg.PostReply(ctx, key, "1969.", conversation.Tag{Answer: true, Final: true})
	if err != nil {
		t.Fatal(err)
	}
	env, err := h.emu.ClickFeedback("C0GENERAL", answer, "U0ALICE", false)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case f := <-rec.saved:
		if f.Rating != conversation.RatingNegative || f.MessageTS != answer {
			t.Errorf("stored %+v; want the thumbs down on the answer", f)
		}
	case <-ctx.Done():
		t.Fatal("the feedback was not stored: its record waited for the reason modal, which opened only after it")
	}
	h.waitAcked(t, env)
}
