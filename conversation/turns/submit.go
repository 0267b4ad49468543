package turns

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/threadwright/threadwright/conversation"
)

// Submit accepts an input: it stores it (deduplicated by in.ID), or spools it when the
// store is unavailable, and starts work on its thread. It returns nil only once the
// input is durably kept, so the caller may acknowledge it then; accepted is false when
// the input was a duplicate or is not for the bot (a thread reply, without a mention,
// in a thread the bot is not part of), or was refused by a limit (docs/operations.md, "Limits and secrets";
// its author is told). It does not wait for the turn. ctx's deadline
// bounds the store retries. Errors: ErrClosed after Shutdown began; the store's (and
// the spool's) when the input could not be kept.
func (s *Runtime) Submit(ctx context.Context, in conversation.Input) (accepted bool, err error) {
	return s.submit(ctx, in, true)
}

// submit is Submit; limited false skips the flood limits, for an input that continues
// one they admitted already (a channel command forwarded to its thread).
func (s *Runtime) submit(ctx context.Context, in conversation.Input, limited bool) (accepted bool, err error) {
	channelCommand := in.Kind == conversation.KindCommand && in.Key.ThreadTS == "" && in.Key.TeamID != "" && in.Key.ChannelID != ""
	if in.ID == "" || (!in.Key.Valid() && !channelCommand) {
		return false, fmt.Errorf("conversation: submit: input %q has no id or an incomplete key %q", in.ID, in.Key)
	}
	if s.isClosed() {
		return false, conversation.ErrClosed
	}
	in = storable(in)
	if a := in.Action; in.Kind == conversation.KindAction && a != nil && a.Action.Name == conversation.ActionStop {
		// A Stop click cannot wait behind the turn it stops: it acts at once, here or
		// on the replica that runs the turn. A pipeline between two of its turns is
		// stopped in its turn, in order.
		if s.stopLocal(in.Key, a.Action.Arg, conversation.Stopped{By: a.UserID}) {
			return true, nil
		}
		if err := s.cfg.Store.Signal(ctx, in.Key, conversation.StopRequest{Target: a.Action.Arg, By: a.UserID}); err != nil {
			s.log.Warn("stop request not passed on", conversation.LogKeyThread, in.Key.String(), "error", err)
		}
		if !strings.HasPrefix(a.Action.Arg, conversation.RunStopPrefix) {
			return false, nil // nothing to store: the holder stops the turn, if it runs
		}
	}
	if m := in.Message; m != nil && !m.Mentioned && !m.Direct && !s.Holds(in.Key) && !s.isSpooling() {
		var ok bool
		err := s.retryStore(ctx, "check the thread", func(ctx context.Context) error {
			var err error
			ok, err = s.cfg.Store.Exists(ctx, in.Key)
			return err
		})
		switch {
		case err != nil && storeDown(err) && s.cfg.Spool != nil:
			// Spooled; the drain checks the thread when the store answers again.
		case err != nil:
			return false, fmt.Errorf("submit %s: %w", in.ID, err)
		case !ok:
			return false, nil
		}
	}
	if limited {
		if r := s.admit(ctx, in); r != nil {
			if s.enqueuedAlready(ctx, in) {
				s.log.Debug("duplicate input dropped", conversation.LogKeyInput, in.ID, conversation.LogKeyEvent, in.EventID)
				return false, nil
			}
			s.refuse(in, r)
			return false, nil
		}
	}
	in.Status = conversation.InputPending
	in.CreatedAt = s.cfg.Now().UTC()
	return s.accept(ctx, in)
}

// accept stores in, or spools it when the store is unavailable or inputs are spooled
// already (they go into the store in order), and starts work on its thread. One
// accept runs at a time, so that no input overtakes an earlier one that was spooled.
func (s *Runtime) accept(ctx context.Context, in conversation.Input) (bool, error) {
	s.intakeMu.Lock()
	defer s.intakeMu.Unlock()
	s.spoolMu.Lock()
	spooling := s.spooling
	s.spoolMu.Unlock()
	if !spooling {
		inserted, err := s.enqueue(ctx, in)
		switch {
		case err == nil:
			if !inserted {
				s.log.Debug("duplicate input dropped", conversation.LogKeyInput, in.ID, conversation.LogKeyEvent, in.EventID)
				return false, nil
			}
			s.notify(in)
			return true, nil
		case s.cfg.Spool == nil || !storeDown(err) && ctx.Err() == nil:
			return false, fmt.Errorf("submit %s: %w", in.ID, err)
		}
		s.log.Warn("store unavailable: input spooled to local disk", conversation.LogKeyInput, in.ID, "error", err)
	}
	return s.spoolPut(in)
}

// enqueue stores in, retrying while the store is unavailable until ctx's deadline,
// less the time a spool write takes.
func (s *Runtime) enqueue(ctx context.Context, in conversation.Input) (bool, error) {
	if d, ok := ctx.Deadline(); ok && s.cfg.Spool != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-spoolReserve))
		defer cancel()
	}
	var inserted bool
	err := s.retryStore(ctx, "store an input", func(ctx context.Context) error {
		var err error
		inserted, err = s.cfg.Store.Enqueue(ctx, in)
		return err
	})
	return inserted, err
}

// storeDown reports whether err says the store is unavailable or did not answer in
// time (a hung connection ends with the deadline of the store call's context).
func storeDown(err error) bool {
	return errors.Is(err, conversation.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded)
}

// notify tells this process's worker of in's thread that in was stored: a newer
// person's message stops the turn running there (unless that turn is in's own: the
// worker may have taken in between its insert and this call, having learnt of it from
// the lease's renewal), and a worker starts if none runs.
func (s *Runtime) notify(in conversation.Input) {
	if m := in.Message; m != nil && s.stopOlder(in, conversation.Stopped{By: m.UserID, NewMessage: true}) {
		s.log.Info("a newer message stopped the running turn", conversation.LogKeyThread, in.Key.String(), conversation.LogKeyInput, in.ID)
	}
	s.kick(in.Key)
}
