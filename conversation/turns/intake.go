package turns

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/render"
)

// Accepted means stored (docs/architecture.md): Submit returns nil only once an input
// is in the store, or, while the store is unavailable, in the local Spool. While any
// input is spooled, new inputs are spooled too, so that the drain moves them into the
// store in the order they came; then they run as if they had been stored at once.

// intake takes the inputs of Submit (docs/architecture.md, "Accepted means
// stored"): it checks them against the flood limits (limits.go), stores them, or
// spools them while the store is down, and starts work on their threads. An input is
// kept before Submit returns, so that its envelope is acked only then.
type intake struct {
	*env
	limits *limits
	spool  *spooler
	// kick makes this process work on the thread of an input it stored.
	kick func(conversation.Key)
	// commit stores inputs in batches (group commit).
	commit *groupCommit
	// gate is told of each Submit in flight: turns wait while the intake is busy
	// (admission.go).
	gate *admission
}

// Submit accepts an input: it stores it (deduplicated by in.ID), or spools it when the
// store is unavailable, and starts work on its thread. It returns nil only once the
// input is durably kept, so the caller may acknowledge it then; accepted is false when
// the input was a duplicate or is not for the bot (a thread reply, without a mention,
// in a thread the bot is not part of), or was refused by a limit
// (docs/operations.md, "Limits and secrets"; its author is told). It does not wait for
// the turn. ctx's deadline bounds the store retries. Errors:
// conversation.ErrClosed after Shutdown began; the store's (and the spool's) when the
// input could not be kept, or a Stop not passed on to the process whose turn it
// stops (Store.Signal). While it runs, and briefly after, turns wait to start
// (admission.go).
func (s *intake) Submit(ctx context.Context, in conversation.Input) (accepted bool, err error) {
	s.gate.enter()
	defer s.gate.leave()
	return s.submit(ctx, in, true)
}

// submit is Submit; limited false skips the flood limits, for an input that continues
// one they admitted already (a channel command forwarded to its thread).
func (s *intake) submit(ctx context.Context, in conversation.Input, limited bool) (accepted bool, err error) {
	channelCommand := in.Kind == conversation.KindCommand && in.Key.ThreadTS == "" && in.Key.TeamID != "" && in.Key.ChannelID != ""
	if in.ID == "" || (!in.Key.Valid() && !channelCommand) {
		return false, fmt.Errorf("conversation: submit: input %q has no id or an incomplete key %q", in.ID, in.Key)
	}
	if s.threads.isClosed() {
		return false, conversation.ErrClosed
	}
	in = storable(in)
	if a := in.Action; in.Kind == conversation.KindAction && a != nil && a.Action.Name == conversation.ActionStop {
		// A Stop click cannot wait behind the turn it stops: it acts at once, here or
		// on the replica that runs the turn. A pipeline between two of its turns is
		// stopped in its turn, in order; so is one the session's native Stop
		// (conversation.SessionStop) did not find running here.
		if s.threads.stopLocal(in.Key, a.Action.Arg, conversation.Stopped{By: a.UserID}) {
			return true, nil
		}
		stop := conversation.StopRequest{Target: a.Action.Arg, By: a.UserID}
		signal := func(ctx context.Context) (struct{}, error) { return struct{}{}, s.cfg.Store.Signal(ctx, in.Key, stop) }
		if !strings.HasPrefix(a.Action.Arg, conversation.RunStopPrefix) && a.Action.Arg != conversation.SessionStop {
			// Nothing else carries it: retried while the store is unavailable, and
			// the person is told when it was not taken. Nothing is stored after it:
			// it may take the time up to spoolReserve before the deadline, and a call
			// that hangs is given up storeGrace later (answerBy).
			sctx, cancel := checkTime(ctx, 0, spoolReserve, storeGrace)
			err := s.retryStore(sctx, "pass a stop on", func(ctx context.Context) error {
				_, err := answerBy(ctx, signal)
				return err
			})
			cancel()
			if err != nil {
				return false, fmt.Errorf("submit %s: pass the stop on: %w", in.ID, err)
			}
			return false, nil // nothing to store: the holder stops the turn, if it runs
		}
		// Stored below too, for the thread's next turn: one short try (check), which
		// leaves the ack budget to the store.
		if _, err := check(ctx, signal); err != nil {
			s.log.Warn("stop request not passed on; it is stored for the thread's next turn", conversation.LogKeyThread, in.Key.String(), "error", err)
		}
	}
	ok, unchecked, err := s.forTheBot(ctx, in)
	if !ok || err != nil {
		return false, err
	}
	var (
		tok token
		res *reservation
	)
	if limited {
		r, t, rs := s.admit(ctx, in, unchecked)
		defer rs.release() // unless stored: then it counts as pending
		if r != nil {
			if s.enqueuedAlready(ctx, in, unchecked) {
				t.giveBack()
				s.log.Debug("duplicate input dropped", conversation.LogKeyInput, in.ID, conversation.LogKeyEvent, in.EventID)
				return false, nil
			}
			s.refuse(in, r)
			return false, nil
		}
		tok, res = t, rs
	}
	in.Status = conversation.InputPending
	in.CreatedAt = s.cfg.Now().UTC()
	if !unchecked {
		s.amend(ctx, in)
	}
	accepted, err = s.accept(ctx, in, res, unchecked)
	if !accepted {
		// A duplicate, stored or spooled already, or one not kept (an error: Slack
		// delivers it again): it costs no token.
		tok.giveBack()
	}
	return accepted, err
}

// Spooled returns input id as this process's spool holds it, waiting for the store
// (docs/architecture.md, "Accepted means stored"): kept, though the store may not
// hold it yet. It returns nil without a spool, or when the spool does not hold it.
// Errors: the spool's.
func (s *intake) Spooled(ctx context.Context, id string) (*conversation.Input, error) {
	if s.cfg.Spool == nil {
		return nil, nil
	}
	in, ok, err := s.cfg.Spool.Get(ctx, id)
	if !ok || err != nil {
		return nil, err
	}
	return &in, nil
}

// forTheBot reports whether in may be for the bot: false for a thread reply, without
// a mention, in a thread the bot is not part of (Store.Exists). unchecked is true when
// the store did not answer in time, with a spool: the reply is to be spooled, and the
// drain checks its thread when the store answers again.
func (s *intake) forTheBot(ctx context.Context, in conversation.Input) (ok, unchecked bool, err error) {
	m := in.Message
	if m == nil || m.Mentioned || m.Direct || s.threads.holds(in.Key) || s.spool.isSpooling() {
		return true, false, nil
	}
	cctx, cancel := checkTime(ctx, 0, lateReserves...)
	defer cancel()
	err = s.retryStore(cctx, "check the thread", func(ctx context.Context) error {
		var err error
		ok, err = answerBy(ctx, func(ctx context.Context) (bool, error) { return s.cfg.Store.Exists(ctx, in.Key) })
		return err
	})
	switch {
	case err != nil && storeDown(err) && s.cfg.Spool != nil:
		return true, true, nil
	case err != nil:
		return false, false, fmt.Errorf("submit %s: %w", in.ID, err)
	}
	return ok, false, nil
}

// checkReserve is the time Submit keeps, before its deadline, for storing its input
// after its checks (the thread's, the limits' counts and lookup, an edit's amend, a
// Stop's Signal): the group commit's least attempt and its grace, and the spool's
// write (docs/architecture.md, "Accepted means stored").
const checkReserve = spoolReserve + minAttempt + storeGrace

// lateReserves are the reserves of a check (checkTime): checkReserve, or, for a
// Submit that came with less time than that left (its envelope waited long on its
// lane), the spool's, then the grace's, then none (the check may take the time up to
// the deadline). Such a Submit still makes its checks, which a healthy store answers
// at once; should the store hang, its ack may come late (Slack delivers the envelope
// again, a duplicate).
var lateReserves = []time.Duration{checkReserve, spoolReserve, storeGrace}

// minCheck is the least time a reserve must leave a check for checkTime to keep it:
// a check given less, which a healthy store could not answer in time either, is
// given the next reserve's time instead.
const minCheck = 100 * time.Millisecond

// checkTime returns the context of one of Submit's store calls: ctx, ending before
// its deadline by the first of reserves that leaves it minCheck (with none, at the
// deadline), and limit from now when limit > 0 and sooner.
func checkTime(ctx context.Context, limit time.Duration, reserves ...time.Duration) (context.Context, context.CancelFunc) {
	end, bounded := ctx.Deadline()
	if bounded {
		for _, r := range reserves {
			if time.Until(end.Add(-r)) >= minCheck {
				end = end.Add(-r)
				break
			}
		}
	}
	if soon := time.Now().Add(limit); limit > 0 && (!bounded || soon.Before(end)) {
		end, bounded = soon, true
	}
	if !bounded {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, end)
}

// check runs op, one of Submit's store calls before its input is stored, within
// countTimeout and checkTime's lateReserves (answerBy: given up storeGrace after
// that even on a connection that hangs).
func check[T any](ctx context.Context, op func(context.Context) (T, error)) (T, error) {
	ctx, cancel := checkTime(ctx, countTimeout, lateReserves...)
	defer cancel()
	return answerBy(ctx, op)
}

// amend applies an edit or a deletion (KindEdit, KindDelete) to the input of the
// message it changes while that input waits, its turn not begun (Store.Amend): the
// turn answers the edited text, or the deleted message is not answered
// (docs/architecture.md, "Edits and deletions"). The edit or deletion is stored
// all the same: its own turn, in thread order, finds the history as it should be,
// or changes it. While inputs are spooled, or when the store does not answer, the
// waiting input is left as it is and the edit's turn comes after it.
func (s *intake) amend(ctx context.Context, in conversation.Input) {
	if (in.Kind != conversation.KindEdit && in.Kind != conversation.KindDelete) || in.Message == nil || s.spool.isSpooling() {
		return
	}
	m := in.Message
	ok, err := check(ctx, func(ctx context.Context) (bool, error) {
		return s.cfg.Store.Amend(ctx, conversation.MessageInputID(in.Key.TeamID, in.Key.ChannelID, m.TS), m.Text, in.Kind == conversation.KindDelete)
	})
	switch {
	case err != nil:
		s.log.Warn("waiting input not amended; the edit runs after it", conversation.LogKeyInput, in.ID, "error", err)
	case ok:
		s.log.Info("waiting input amended", conversation.LogKeyInput, in.ID, "kind", string(in.Kind))
	}
}

// accept stores in (with the inputs submitted with it: group commit, commit.go), or
// spools it when the store is unavailable or inputs are spooled already (they go into
// the store in order), and starts work on its thread; spool true spools it at once (a
// reply whose thread the store did not check in time: forTheBot). res is in's
// reservation in the queue bounds (nil for none): once in is stored, it counts as
// pending instead.
func (s *intake) accept(ctx context.Context, in conversation.Input, res *reservation, spool bool) (bool, error) {
	if !spool && !s.spool.isSpooling() {
		r := s.commit.store(ctx, in, func() { s.limits.stored(in, res) })
		switch err := r.err; {
		case err == nil && !r.inserted && !r.retried:
			s.log.Debug("duplicate input dropped", conversation.LogKeyInput, in.ID, conversation.LogKeyEvent, in.EventID)
			return false, nil
		case err == nil:
			if !r.inserted {
				// A failed attempt of its batch may have stored it (a commit whose reply
				// was lost): it is accepted, and its thread started, rather than left to
				// the sweep and reported a duplicate (a worker finds what is pending, if
				// anything). It stops no running turn: it may be a copy Slack delivered
				// again of an input older than that turn's (notify).
				s.log.Debug("input found stored after a failed attempt; accepted", conversation.LogKeyInput, in.ID)
				s.limits.stored(in, res)
				s.kick(in.Key)
				return true, nil
			}
			s.notify(in)
			return true, nil
		case s.cfg.Spool == nil || !storeDown(err) && ctx.Err() == nil:
			return false, fmt.Errorf("submit %s: %w", in.ID, err)
		default:
			s.log.Warn("store unavailable: input spooled to local disk", conversation.LogKeyInput, in.ID, "error", err)
		}
	}
	return s.spool.put(in, res)
}

// notify tells this process's worker of in's thread that in was stored: a newer
// person's message stops the turn running there (unless that turn is in's own: the
// worker may have taken in between its insert and this call, having learnt of it from
// the lease's renewal), and a worker starts if none runs.
func (s *intake) notify(in conversation.Input) {
	s.stopFor(in)
	s.kick(in.Key)
}

// stopFor stops the turn running in in's thread on this process when in is a
// person's message sent after the newest message that turn answers (threadSet.stopOlder).
func (s *intake) stopFor(in conversation.Input) {
	if m := in.Message; m != nil && in.Kind == conversation.KindUserMessage && s.threads.stopOlder(in, conversation.Stopped{By: m.UserID, NewMessage: true}) {
		s.log.Info("a newer message stopped the running turn", conversation.LogKeyThread, in.Key.String(), conversation.LogKeyInput, in.ID)
	}
}

// admit applies the limits to in (see limits.go) and returns the refusal, or nil
// when in may be queued, the token it took from its author's bucket (given back when
// in turns out to be a duplicate), and in's reservation in the queue bounds (nil for
// none: limits.reserve; the caller releases it, unless in is stored). offline true
// asks the store nothing (it did not answer: forTheBot).
func (s *intake) admit(ctx context.Context, in conversation.Input, offline bool) (*refusal, token, *reservation) {
	user, now := in.User(), s.cfg.Now()
	switch in.Kind {
	case conversation.KindAction:
		if a := in.Action; a != nil && a.Action.Name == conversation.ActionStop {
			return nil, token{}, nil // a pipeline's Stop, stored for its next turn: never refused
		}
		t, d := s.limits.take(in.Key.TeamID, user, true, now)
		if d > 0 {
			return &refusal{kind: limitRate, retry: d}, t, nil
		}
		return nil, t, nil
	case conversation.KindUserMessage, conversation.KindCommand:
	default:
		return nil, token{}, nil
	}
	t, d := s.limits.take(in.Key.TeamID, user, false, now)
	if d > 0 {
		return &refusal{kind: limitRate, retry: d}, t, nil
	}
	r, res := s.queueBounds(ctx, in, user, offline)
	return r, t, res
}

// queueBounds applies MaxQueuedPerThread and MaxQueuedPerUser to in, of user (see
// limits.go), and returns the refusal, or nil and in's reservation (limits.reserve;
// nil when no bound applies). The store is not asked while inputs are spooled, nor
// with offline true; then the bounds count only the inputs this process spooled or is
// admitting.
func (s *intake) queueBounds(ctx context.Context, in conversation.Input, user string, offline bool) (*refusal, *reservation) {
	perThread, perUser := s.cfg.MaxQueuedPerThread, s.cfg.MaxQueuedPerUser
	if perThread <= 0 && (perUser <= 0 || user == "") {
		return nil, nil
	}
	var w *countWatch
	if !offline && !s.spool.isSpooling() && s.limits.near(in.Key, user, perThread, perUser) {
		w = s.limits.watch(in.Key, user)
		c, err := check(ctx, func(ctx context.Context) (conversation.PendingCounts, error) {
			return s.cfg.Store.CountPending(ctx, in.Key, user, max(perThread, perUser))
		})
		switch {
		case err == nil:
			w.store = &c
		case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, conversation.ErrUnavailable):
			s.log.Warn("pending inputs not counted; the input is admitted", conversation.LogKeyInput, in.ID, "error", err)
		default:
			s.log.Error("pending inputs not counted; the input is admitted", conversation.LogKeyInput, in.ID, "error", err)
		}
	}
	return s.limits.reserve(in.Key, user, w, perThread, perUser)
}

// enqueuedAlready reports whether in, refused by a limit, is stored already: a copy
// Slack delivered again because the ack of the first came late is a duplicate, not a
// new request, and is never refused nor noticed. While inputs are spooled, it looks
// among those this process spooled (limits.isSpooled), as it does with offline true
// (the store did not answer: forTheBot); it answers false when the store does not
// answer within countTimeout.
func (s *intake) enqueuedAlready(ctx context.Context, in conversation.Input, offline bool) bool {
	if offline || s.spool.isSpooling() {
		return s.limits.isSpooled(in.ID)
	}
	ok, err := check(ctx, func(ctx context.Context) (bool, error) { return s.cfg.Store.Enqueued(ctx, in.ID) })
	if err != nil {
		s.log.Warn("refused input not looked up", conversation.LogKeyInput, in.ID, "error", err)
	}
	return ok
}

// refuse logs that in was refused and tells its author, unless they were told within
// NoticeInterval: an ephemeral message in the thread (in the channel for a top-level
// message or a DM), posted in the background so that the ack does not wait.
func (s *intake) refuse(in conversation.Input, r *refusal) {
	user := in.User()
	s.log.Info("input refused: over a limit", conversation.LogKeyInput, in.ID, conversation.LogKeyThread, in.Key.String(), "user", user,
		"limit", string(r.kind), "pending", r.pending, "retry_after", r.retry)
	if user == "" || !s.limits.notice(in.Key.TeamID, user, s.cfg.Now(), s.cfg.NoticeInterval) || s.bgCtx.Err() != nil {
		return
	}
	key := in.Key
	if m := in.Message; m != nil && (m.Direct || m.ThreadTS == "" || m.ThreadTS == m.TS) {
		key.ThreadTS = ""
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		ctx, cancel := context.WithTimeout(s.bgCtx, 10*time.Second)
		defer cancel()
		lang := "en"
		if l, err := s.cfg.Messenger.UserLocale(ctx, user); err == nil && l != "" {
			lang = render.UILang(l)
		}
		if err := s.cfg.Messenger.PostEphemeral(ctx, key, user, refusalText(lang, r)); err != nil {
			s.log.Warn("notice of a refused input not posted", conversation.LogKeyInput, in.ID, "error", err)
		}
	}()
}

// storable returns in with its texts made storable: NUL characters removed and
// invalid UTF-8 replaced with U+FFFD (a database refuses them; Slack may send them).
func storable(in conversation.Input) conversation.Input {
	if m := in.Message; m != nil {
		c := *m
		c.Text = storableText(c.Text)
		in.Message = &c
	}
	if a := in.Action; a != nil {
		c := *a
		c.Text = storableText(c.Text)
		in.Action = &c
	}
	if cmd := in.Command; cmd != nil {
		c := *cmd
		c.Line = storableText(c.Line)
		in.Command = &c
	}
	return in
}

// storableText returns s without NUL characters and with invalid UTF-8 replaced.
func storableText(s string) string {
	if utf8.ValidString(s) && !strings.ContainsRune(s, 0) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
}
