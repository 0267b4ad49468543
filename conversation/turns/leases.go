package turns

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/threadwright/threadwright/conversation"
	"golang.org/x/sync/singleflight"
)

// leases keeps this process's thread leases: it takes and frees them, renews them
// all in one heartbeat, applies what other replicas asked through them, and hands
// them over at shutdown (scheduler.go; docs/architecture.md, "Durable turns").
type leases struct {
	*env
	// renewing runs the renewals of confirm, one at a time, each shared by the turns
	// that confirm meanwhile (renewNow).
	renewing *singleflight.Group
	// finished is told of each input failed here (the limits' counts; nil: none).
	finished func(conversation.Input)
}

// acquire takes t's lease and, with begin (the worker holds a turn slot), begins the
// thread's first pending input in the same call (Store.AcquireBegin), which it
// returns (nil when none was begun: Next begins it). It reports false when another
// worker holds the thread (which then runs its inputs) or the store does not answer
// (the sweep tries again).
func (ls leases) acquire(t *thread, begin bool) (*conversation.Input, bool) {
	log := ls.log.With(conversation.LogKeyThread, t.key.String())
	ts := ls.threads
	bo := storeBackoff(0)
	for {
		ts.mu.Lock()
		pokes := t.pokes
		ts.mu.Unlock()
		start := ls.cfg.Now()
		var (
			l    conversation.Lease
			prev string
			in   *conversation.Input
			ok   bool
			err  error
		)
		if begin {
			l, prev, in, ok, err = ls.cfg.Store.AcquireBegin(ls.ctx, t.key, ls.cfg.Owner, ls.cfg.LeaseTTL)
		} else {
			l, prev, ok, err = ls.cfg.Store.Acquire(ls.ctx, t.key, ls.cfg.Owner, ls.cfg.LeaseTTL)
		}
		var undecodable *conversation.UndecodableError
		if errors.As(err, &undecodable) {
			err = nil // the lease is taken: the input is failed below
		}
		switch {
		case err != nil && errors.Is(err, conversation.ErrUnavailable) && ls.ctx.Err() == nil:
			wait := bo.NextBackOff()
			if wait == backoff.Stop {
				log.Warn("thread not taken: the store does not answer; the sweep tries again", "error", err)
				return nil, false
			}
			log.Warn("taking a thread: store unavailable; retrying", "wait", wait, "error", err)
			if !sleepCtx(ls.ctx, wait) {
				return nil, false
			}
			continue
		case err != nil:
			if ls.ctx.Err() == nil {
				log.Error("thread not taken; the sweep tries again", "error", err)
			}
			return nil, false
		case !ok:
			// Another worker holds it and runs its inputs. An input enqueued here
			// while it released the lease would find the lease free: look again.
			// Otherwise t goes now, under the lock, so that the next input enqueued
			// here starts a new attempt rather than poking a worker that is gone.
			ts.mu.Lock()
			again := t.pokes != pokes
			if !again && ts.m[t.key] == t {
				delete(ts.m, t.key)
			}
			ts.mu.Unlock()
			if again {
				continue
			}
			return nil, false
		}
		ls.tookFrom(log, prev, l)
		ts.mu.Lock()
		// since is when Acquire returned: a Renew that started before then may have
		// read the leases before this one was committed (renewed).
		t.lease, t.since, t.validUntil, t.lost = l, ls.cfg.Now(), start.Add(ls.cfg.LeaseTTL), false
		if in != nil && prev == ls.cfg.Owner {
			t.retaken = in.ID
		}
		ts.mu.Unlock()
		if undecodable != nil {
			if err := ls.failUndecodable(t, undecodable); err != nil {
				log.Warn("undecodable input not finished; the worker's Next begins it again", "error", err)
			}
		}
		return in, true
	}
}

// tookFrom logs at warn a lease l that acquire took from its previous owner prev
// (nothing when the thread was free).
func (ls leases) tookFrom(log *slog.Logger, prev string, l conversation.Lease) {
	switch prev {
	case "":
	case ls.cfg.Owner:
		log.Warn("took this process's own lease again: an earlier Acquire's answer was lost", "token", l.Token)
	default:
		log.Warn("took over a thread whose worker stopped renewing its lease", "previous_owner", prev, "token", l.Token)
	}
}

// next begins the next pending input of t's thread or, when none is pending, frees
// t's lease, in one store call (Store.Next), retrying while the store is unavailable.
// It returns the input; or nil, whether it freed the lease, and t's pokes before the
// call, which freed compares. Nil and not freed, with no error, means an input became
// pending meanwhile, or the input begun did not decode and was failed
// (failUndecodable): call it again.
func (ls leases) next(t *thread) (in *conversation.Input, released bool, pokes int, err error) {
	ts := ls.threads
	ts.mu.Lock()
	pokes = t.pokes
	t.releasing = true
	t.nexts++
	call := t.nexts // a retry is the same call: its answer may have been lost
	ts.mu.Unlock()
	err = ls.retryStore(ls.ctx, "begin the next input", func(ctx context.Context) error {
		var err error
		in, released, err = ls.cfg.Store.Next(ctx, ts.leaseOf(t), call)
		return err
	})
	ts.mu.Lock()
	t.releasing = false
	if err == nil && released {
		t.lease = conversation.Lease{}
	}
	ts.mu.Unlock()
	if undecodable := (*conversation.UndecodableError)(nil); errors.As(err, &undecodable) {
		return nil, false, pokes, ls.failUndecodable(t, undecodable)
	}
	return in, released, pokes, err
}

// failUndecodable finishes as failed the input that u names, begun under t's lease:
// its stored payload does not decode (a corrupt row, or one a newer version wrote), so
// no turn can run it, and trying it again would hold the thread for ever. It logs
// which input and why at error (the decoder's error, which quotes no payload) and
// counts a failed turn. Errors: the Store's (ErrLeaseLost; another, and the input
// stays pending: its next Begin fails it again).
func (ls leases) failUndecodable(t *thread, u *conversation.UndecodableError) error {
	in := u.Input
	err := ls.retryStore(ls.ctx, "fail an undecodable input", func(ctx context.Context) error {
		return ls.cfg.Store.Finish(ctx, ls.threads.leaseOf(t), in.ID, conversation.InputFailed)
	})
	if err != nil {
		return fmt.Errorf("fail undecodable input %s: %w", in.ID, err)
	}
	ls.log.Error("input failed: its stored payload does not decode (a corrupt row, or one written by a newer version); the thread goes on with its next input",
		conversation.LogKeyThread, in.Key.String(), conversation.LogKeyInput, in.ID, "kind", in.Kind, "attempt", in.Attempts, "error", u.Err)
	ls.cfg.Metrics.TurnStarted(string(in.Kind), -1) // a turn that fails as it starts
	ls.cfg.Metrics.TurnEnded(string(in.Kind), conversation.TurnFailed, 0)
	if ls.finished != nil {
		ls.finished(in)
	}
	ls.tellUndecodable(in)
	return nil
}

// tellUndecodable tells in's thread, in a reply, that in could not be read and is to
// be sent again: what the person asked is unknown, but not that they asked. Only what
// a person sends is told (a message, an edit, a click, a command; undecodableText), in
// a thread (a channel command's top level is not; the Messages tab is told at its top,
// as its turns post: Key.Posting). The reply is posted once in is failed, so it is
// never posted twice; best effort, on a context of its own bounded by FinalTimeout: a
// failure is logged.
func (ls leases) tellUndecodable(in conversation.Input) {
	text, ok := undecodableText(in.Kind)
	if !ok || in.Key.ThreadTS == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ls.ctx), ls.cfg.FinalTimeout)
	defer cancel()
	tag := conversation.Tag{InputID: in.ID, N: 1, Answer: true, Final: true, Notice: true}
	if _, err := ls.cfg.Messenger.PostReply(ctx, in.Key.Posting(), text, tag); err != nil {
		ls.log.Warn("notice of an undecodable input not posted", conversation.LogKeyThread, in.Key.String(), conversation.LogKeyInput, in.ID, "error", err)
	}
}

// undecodableText returns the reply that tells a thread an input of kind could not
// be read (tellUndecodable), and false for a kind no person sent as such (a
// pipeline's step, a deletion, an assistant thread's or view's event): nobody is
// waiting for it, and asking for it again would make no sense.
func undecodableText(kind conversation.InputKind) (string, bool) {
	var what string
	switch kind {
	case conversation.KindUserMessage:
		what = "a message"
	case conversation.KindEdit:
		what = "an edit of a message"
	case conversation.KindAction:
		what = "a click on one of my buttons"
	case conversation.KindCommand:
		what = "a command"
	default:
		return "", false
	}
	return "Sorry, I could not read " + what + " sent in this thread: it was stored in a form this version of me does not know (by a newer version, during an upgrade, or damaged), so I did not act on it. Please send it again.", true
}

// freed ends the work on t once next freed its lease, and reports whether the worker
// is done with the thread: an input enqueued here meanwhile (t's pokes no longer
// pokes) makes it take the thread again.
func (ls leases) freed(t *thread, pokes int) bool {
	ts := ls.threads
	ts.mu.Lock()
	again := t.pokes != pokes
	if !again && ts.m[t.key] == t {
		delete(ts.m, t.key) // under the lock: see acquire
	}
	ts.mu.Unlock()
	if again {
		_, ok := ls.acquire(t, false) // no slot held: the worker's Next begins the input
		return !ok
	}
	return true
}

// abandon hands l over (Store.Abandon) on a context of its own, and logs why at info
// when it did.
func (ls leases) abandon(l conversation.Lease, why string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	switch err := ls.cfg.Store.Abandon(ctx, l); {
	case errors.Is(err, conversation.ErrLeaseLost):
		return // another worker has it already
	case err != nil:
		ls.log.Warn("thread not handed over; it is taken over when its lease expires", conversation.LogKeyThread, l.Key.String(), "error", err)
		return
	}
	ls.log.Info(why, conversation.LogKeyThread, l.Key.String())
}

// handOver frees the leases this process still holds, so that other workers take
// their threads at once; a turn of this process that has not returned yet can no
// longer write (its thread is marked lost first).
func (ls leases) handOver() {
	ts := ls.threads
	ts.mu.Lock()
	var held []conversation.Lease
	for _, t := range ts.m {
		if t.lease.Held() && !t.lost {
			t.lost = true
			held = append(held, t.lease)
		}
	}
	ts.mu.Unlock()
	var wg sync.WaitGroup
	for _, l := range held {
		wg.Go(func() { ls.abandon(l, "thread with pending inputs handed over") })
	}
	wg.Wait()
}

// confirm makes sure t's lease is still this process's before the turn writes to the
// chat. While renewals succeed that is known; after they have failed for LeaseTTL it
// renews now, retrying until the store answers or ctx ends, until a renewal has
// proved the lease valid. A lease the turn's last save freed is no longer its own.
// Errors: ErrLeaseLost; ctx's error.
func (ls leases) confirm(ctx context.Context, t *thread) error {
	if t == nil {
		return nil
	}
	for {
		switch valid, err := ls.confirmed(t); {
		case err != nil:
			return err
		case valid:
			return nil
		}
		if err := ls.retryStore(ctx, "confirm the thread's lease", ls.renewNow); err != nil {
			return err
		}
	}
}

// confirmed reports whether t's lease is known valid now; ErrLeaseLost when it was
// taken, or freed.
func (ls leases) confirmed(t *thread) (valid bool, err error) {
	ts := ls.threads
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if t.lost || !t.lease.Held() {
		return false, conversation.ErrLeaseLost
	}
	return ls.cfg.Now().Before(t.validUntil), nil
}

// renewNow renews this process's leases (Store.Renew) and applies the result, in one
// renewal shared by every turn that asks meanwhile: after a store outage, the turns
// about to post confirm at once, and one statement each would queue on the
// heartbeat's connection (postgres.RenewConns) ahead of the heartbeat. A shared
// renewal proves only the leases it saw (renewed: those taken before it started);
// confirm asks again until one proves its turn's. It runs on a context of its own,
// bounded by LeaseTTL and ended by a shutdown, so that a turn that stops waiting
// does not fail the others'; a renewal cut by that bound is reported unavailable, to
// be tried again. Errors: the Store's; ctx's cause when ctx ends first.
func (ls leases) renewNow(ctx context.Context) error {
	ch := ls.renewing.DoChan("", func() (any, error) { return nil, ls.renew(ls.ctx) })
	select {
	case r := <-ch:
		return r.Err
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// renew renews this process's leases (Store.Renew), bounded by LeaseTTL (past it,
// the leases it would renew are gone), and applies the result (renewed). Errors: the
// Store's; a renewal cut by the bound while ctx lives is ErrUnavailable, to be tried
// again.
func (ls leases) renew(ctx context.Context) error {
	rctx, cancel := context.WithTimeout(ctx, ls.cfg.LeaseTTL)
	defer cancel()
	start := ls.cfg.Now()
	states, err := ls.cfg.Store.Renew(rctx, ls.cfg.Owner, ls.cfg.LeaseTTL)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			err = fmt.Errorf("%w: lease renewal took longer than LEASE_TTL: %w", conversation.ErrUnavailable, err)
		}
		return err
	}
	ls.renewed(start, states)
	return nil
}

// heartbeat renews this process's leases every LeaseTTL/10 until ctx ends.
func (ls leases) heartbeat(ctx context.Context) {
	tick := time.NewTicker(ls.cfg.LeaseTTL / 10)
	defer tick.Stop()
	failing := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if err := ls.renew(ctx); err != nil {
			if ctx.Err() == nil && failing%10 == 0 {
				ls.log.Warn("leases not renewed; turns hold their writes until the store answers", "failures", failing+1, "error", err)
			}
			failing++
			continue
		}
		if failing > 0 {
			ls.log.Warn("leases renewed again after store failures", "failures", failing)
			failing = 0
		}
	}
}

// renewed applies the result of a Renew that started at start: leases still held are
// valid for LeaseTTL more and bring other workers' requests (a newer message, a Stop
// button); a lease held since before start and missing from states was taken over. A
// lease of this owner that no worker of this process holds (an Acquire whose answer
// was lost) is handed over, so that it is not renewed for nobody.
func (ls leases) renewed(start time.Time, states []conversation.LeaseState) {
	byKey := make(map[conversation.Key]conversation.LeaseState, len(states))
	for _, st := range states {
		byKey[st.Key] = st
	}
	ts := ls.threads
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for key, st := range byKey {
		if _, ok := ts.m[key]; !ok {
			go ls.abandon(st.Lease, "a lease this process lost track of handed over") // fenced by its token
		}
	}
	for key, t := range ts.m {
		if !t.lease.Held() || t.lost || t.releasing {
			continue
		}
		st, ok := byKey[key]
		if !ok || st.Token != t.lease.Token {
			if t.since.Before(start) {
				t.lost = true
				ls.log.Warn("thread lease lost: another worker took the thread; this worker stops without writing", conversation.LogKeyThread, key.String(), "token", t.lease.Token)
				if t.run != nil {
					t.run.cancel(conversation.ErrLeaseLost)
				}
			}
			continue
		}
		if v := start.Add(ls.cfg.LeaseTTL); v.After(t.validUntil) {
			t.validUntil = v
		}
		t.newest = max(t.newest, st.Newest)
		ls.applyRequests(key, t.run, st)
	}
}

// applyRequests stops the running turn r of thread key when st brings another
// replica's request for it: a newer person's message, or its Stop button. ts.mu is
// held.
func (ls leases) applyRequests(key conversation.Key, r *active, st conversation.LeaseState) {
	if r == nil {
		return
	}
	if st.Message > r.seq && r.stopsForMessage() && !r.looking && (st.Message > r.checked || r.lookups < maxLookups) {
		if st.Message > r.checked {
			r.checked, r.lookups = st.Message, 0
		}
		if r.messageTS == "" {
			ls.stopForMessage(key, r, st)
		} else {
			// Whether it was sent after the turn's message is in the store.
			r.looking = true
			ls.bg.Add(1)
			go ls.stopIfNewer(key, r, st)
		}
	}
	if st.Stop.Target != "" && r.stoppable && r.stoppedBy(st.Stop.Target) {
		ls.log.Info("a Stop button on another replica stopped the running turn", conversation.LogKeyThread, key.String(), conversation.LogKeyInput, r.inputID, "by", st.Stop.By)
		r.cancel(conversation.Stopped{By: st.Stop.By})
		go ls.clearSignal(key)
	}
}

const (
	// pendingScan bounds the pending inputs stopIfNewer reads.
	pendingScan = 100
	// maxLookups bounds the lookups of one LeaseState.Message that find no newer
	// message: a newer one stored by a transaction that commits after an older
	// one's, whose Seq is below it, is found by the next renewal's.
	maxLookups = 3
)

// stopIfNewer stops r, the running turn of thread key, when a person's message that
// another replica enqueued after r's input (Seq above r.seq, up to st.Message) was
// sent after the newest message r answers (active.newerMessage); a late first copy of
// an older message leaves it running. When the store cannot say (it fails, more than
// pendingScan inputs wait, or the pending inputs it reads were cut short before
// st.Message by an undecodable input: cutShort), it stops r, as a newer message
// would. It stops r only while r still runs and a message still stops it (Run.Freeze:
// an answer being posted is not cut short). It runs on ls.bg.
func (ls leases) stopIfNewer(key conversation.Key, r *active, st conversation.LeaseState) {
	defer ls.bg.Done()
	ctx, cancel := context.WithTimeout(ls.bgCtx, 10*time.Second)
	defer cancel()
	pending, err := ls.cfg.Store.Pending(ctx, key, pendingScan)
	newer := err != nil || len(pending) >= pendingScan
	reached := false // whether pending goes as far as the message st names
	for _, in := range pending {
		reached = reached || in.Seq >= st.Message
		if in.Seq > r.seq && in.Seq <= st.Message && in.Kind == conversation.KindUserMessage && in.Message != nil && r.newerMessage(in.Message) {
			newer = true
		}
	}
	if !newer && !reached {
		newer = ls.cutShort(ctx, key, len(pending))
	}
	ts := ls.threads
	ts.mu.Lock()
	defer ts.mu.Unlock()
	r.looking = false
	if !newer {
		r.lookups++
		ls.log.Info("an older message, delivered late, waits for the running turn", conversation.LogKeyThread, key.String(), conversation.LogKeyInput, r.inputID)
		return
	}
	r.lookups = maxLookups // this message is settled: no more lookups of it
	if t := ts.m[key]; t != nil && t.run == r && r.stopsForMessage() {
		ls.stopForMessage(key, r, st)
	}
}

// cutShort reports whether the read pending inputs of thread key, n of them, which
// end before the message a LeaseState named, were cut short: Store.Pending stops
// before an input whose payload does not decode, and what lies behind it the store
// cannot say (true, as when the count fails). When they are all the thread's pending
// inputs, that message left them (its author deleted it: Amend), and stops nothing.
func (ls leases) cutShort(ctx context.Context, key conversation.Key, n int) bool {
	c, err := ls.cfg.Store.CountPending(ctx, key, "", pendingScan)
	return err != nil || c.Thread > n
}

// stopForMessage stops r, the running turn of thread key, for the newer person's
// message st brings (LeaseState.Message, MessageBy). ts.mu is held.
func (ls leases) stopForMessage(key conversation.Key, r *active, st conversation.LeaseState) {
	ls.log.Info("a newer message on another replica stopped the running turn", conversation.LogKeyThread, key.String(), conversation.LogKeyInput, r.inputID)
	r.cancel(conversation.Stopped{By: st.MessageBy, NewMessage: true})
}

// clearSignal removes an applied stop request, so that it does not stop a later
// turn of the same pipeline run.
func (ls leases) clearSignal(key conversation.Key) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ls.cfg.Store.Signal(ctx, key, conversation.StopRequest{}); err != nil {
		ls.log.Warn("stop request not cleared", conversation.LogKeyThread, key.String(), "error", err)
	}
}

// orphanBatch bounds the threads one sweep takes.
const orphanBatch = 500

// orphans returns the threads with pending inputs and no live lease, at most
// orphanBatch.
func (ls leases) orphans(ctx context.Context) ([]conversation.Key, error) {
	keys, err := ls.cfg.Store.Orphans(ctx, orphanBatch)
	if err != nil {
		return nil, fmt.Errorf("find threads without a worker: %w", err)
	}
	return keys, nil
}
