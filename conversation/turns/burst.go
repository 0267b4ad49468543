package turns

import (
	"context"
	"time"

	"github.com/threadwright/threadwright/conversation"
)

// Double texting (docs/architecture.md, "Double texting"): what a person's message
// does when it arrives while a turn of its thread runs or waits. Under interrupt it
// stops the running turn (intake.notify, leases.applyRequests); under queue and merge
// it waits for its turn. Under merge, the worker that begins a person's message first
// waits until the newest message of the burst is MergeWindow old, reading the burst
// from the store (Store.Pending, Input.CreatedAt), so that the replica holding the
// lease decides from what every replica stored; the turn then answers the whole burst,
// and its save marks every message of it done (Turn.Merged).

// maxBurst bounds the messages one turn answers together.
const maxBurst = 20

// policy returns the double-texting policy of thread key's channel.
func (e *env) policy(key conversation.Key) conversation.DoubleTexting {
	if e.cfg.DoubleTexting == nil {
		return DefaultDoubleTexting
	}
	if p := e.cfg.DoubleTexting(key); p != "" {
		return p
	}
	return DefaultDoubleTexting
}

// burst returns in with the person's later messages of its burst merged into it
// (Input.Burst) once the burst is MergeWindow old, when in is a person's message of a
// channel whose policy is merge; any other input as it is. It holds t's lease and
// turn slot meanwhile. It reads the burst (Store.Pending) only once the window of the
// newest message it knows of has closed: once for a message that nobody followed up,
// and again after each newer message's window. Errors: conversation.ErrLeaseLost; the
// runtime's context's when it shuts down; the store's.
func (s *scheduler) burst(t *thread, in conversation.Input) (conversation.Input, error) {
	if in.Kind != conversation.KindUserMessage || in.Message == nil || s.policy(in.Key) != conversation.DoubleTextingMerge {
		return in, nil
	}
	newest := in.CreatedAt
	for {
		if wait := newest.Add(s.cfg.MergeWindow).Sub(s.cfg.Now()); wait > 0 {
			// The clock is looked at again every second, at most: a clock set forward
			// (a test's) ends the window without waiting for it.
			if !sleepCtx(s.ctx, min(wait, time.Second)) {
				return in, s.ctx.Err()
			}
			if s.threads.isLost(t) {
				return in, conversation.ErrLeaseLost
			}
			continue
		}
		var pending []conversation.Input
		err := s.retryStore(s.ctx, "read the burst", func(ctx context.Context) error {
			var err error
			pending, err = s.cfg.Store.Pending(ctx, in.Key, maxBurst+1)
			return err
		})
		if err != nil {
			return in, err
		}
		in.Burst = burstOf(in, pending)
		n := len(in.Burst)
		if n == 0 || n >= maxBurst {
			return in, nil
		}
		if newest = in.Burst[n-1].CreatedAt; !newest.Add(s.cfg.MergeWindow).After(s.cfg.Now()) {
			return in, nil
		}
	}
}

// burstOf returns the person's messages that follow in among pending (the thread's
// pending inputs, lowest Seq first, in among them): those of in's author that come
// next, up to the first input of another kind or author.
func burstOf(in conversation.Input, pending []conversation.Input) []conversation.Input {
	var out []conversation.Input
	after := false
	for _, p := range pending {
		switch {
		case p.ID == in.ID:
			after = true
			continue
		case !after:
			continue
		case p.Kind != conversation.KindUserMessage || p.Message == nil || p.Message.UserID != in.Message.UserID || len(out) >= maxBurst:
			return out
		}
		out = append(out, p)
	}
	return out
}
