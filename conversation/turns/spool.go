package turns

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/threadwright/threadwright/conversation"
)

// maxUnspoolFailures is how often a spooled input may fail to go into the store for a
// reason other than the store being down before it is dropped.
const maxUnspoolFailures = 5

// spoolReserve is the time Submit keeps, before its deadline, for writing to the
// spool after the store failed.
const spoolReserve = 500 * time.Millisecond

// unspoolTimeout bounds each store call of the drain: one that does not answer by then,
// even on a connection that ignores its context (answerBy), counts as the store being
// down, and the drain tries again later.
const unspoolTimeout = 10 * time.Second

// spooler keeps inputs on local disk while the store is unavailable
// (docs/architecture.md, "Accepted means stored"): while anything is spooled, new
// inputs are spooled too, and a drain moves them into the store in the order they
// came as soon as it answers again.
type spooler struct {
	*env
	limits *limits
	// stop stops the turn running in a thread of this process that a person's newer
	// message went into the store for (intake.stopFor); kick starts work on a
	// thread. The drain calls them once a pass has stored its inputs (announce).
	stop func(conversation.Input)
	kick func(conversation.Key)

	// mu serializes the spool's hand-over: while spooling is set, inputs go to the
	// spool, in order, and the drain moves them into the store.
	mu       sync.Mutex
	spooling bool
	draining bool
}

// put spools in and makes sure the drain runs; res is in's reservation in the queue
// bounds (nil for none): once in is spooled, it counts as spooled instead.
func (s *spooler) put(in conversation.Input, res *reservation) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// The spool is local disk; it gets a context of its own, so that an input whose
	// store attempts used up the caller's time is still kept.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	put, err := s.cfg.Spool.Put(ctx, in)
	if err != nil {
		return false, fmt.Errorf("submit %s: spool: %w", in.ID, err)
	}
	if put {
		s.limits.spool(in, 1, res)
	}
	s.spooling = true
	s.startDrainLocked(s.bgCtx)
	return put, nil
}

// isSpooling reports whether inputs go to the spool.
func (s *spooler) isSpooling() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.spooling
}

// startDrainLocked starts the drain unless it runs; mu is held.
func (s *spooler) startDrainLocked(ctx context.Context) {
	if s.draining {
		return
	}
	s.draining = true
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		s.drain(ctx)
	}()
}

// drain moves spooled inputs into the store, oldest first, retrying while the store is
// unavailable, until the spool is empty (then new inputs go to the store again) or ctx
// ends. It stops spooling and draining in one step: an input put in the spool after
// that finds no drain running, and starts one. It announces what it stored (arrivals)
// once the spool is empty, when a pass fails (before it waits to try the input
// again), and announceAfter after the first input it has not announced yet went in:
// the inputs people sent while the store was down go in together, and none stops the
// turn of another sent with it, while a long spool's first threads start as the rest
// goes in.
func (s *spooler) drain(ctx context.Context) {
	emptied := false
	var stored arrivals
	defer func() {
		s.announce(&stored)
		if !emptied {
			s.mu.Lock()
			s.draining = false
			s.mu.Unlock()
		}
	}()
	moved := 0
	failures := map[string]int{} // an input's failures other than the store being down
	// tried holds the inputs an attempt to store failed for: it may have stored
	// them (a commit whose answer came late or was lost).
	tried := map[string]bool{}
	for ctx.Err() == nil {
		batch, err := s.cfg.Spool.Peek(ctx, 100)
		if err != nil {
			s.announce(&stored)
			s.log.Error("spool not read; retrying", "error", err)
			if !sleepCtx(ctx, time.Second) {
				return
			}
			continue
		}
		if len(batch) == 0 {
			// Before spooling ends: Wait must not find this process idle while
			// inputs it stored have no worker yet.
			s.announce(&stored)
			s.mu.Lock()
			n, err := s.cfg.Spool.Len(ctx)
			if err == nil && n == 0 {
				s.spooling, s.draining, emptied = false, false, true
				s.mu.Unlock()
				if moved > 0 {
					s.log.Warn("store available again: spooled inputs moved into it", "count", moved)
				}
				return
			}
			s.mu.Unlock()
			if err != nil && !sleepCtx(ctx, time.Second) {
				return
			}
			continue
		}
		n, err := s.pass(ctx, batch, failures, tried, &stored)
		moved += n
		if err != nil || len(stored.keys) > 0 && s.cfg.Now().Sub(stored.since) >= announceAfter {
			s.announce(&stored)
		}
		if err != nil && !sleepCtx(ctx, time.Second) {
			return
		}
	}
}

// announceAfter bounds the time the drain holds back the announcement of an input it
// stored (drain): a sweep would start its thread after LeaseTTL/5 (2 s by default)
// anyway.
const announceAfter = time.Second

// arrivals are the inputs the drain stored and has not announced yet (announce).
type arrivals struct {
	fresh []conversation.Input // stored by the drain
	keys  []conversation.Key   // the threads of every input stored, by the drain or before
	since time.Time            // when the first of keys went in (Config.Now)
}

// add records in, stored by the drain (fresh) or found stored.
func (a *arrivals) add(in conversation.Input, fresh bool, now time.Time) {
	if len(a.keys) == 0 {
		a.since = now
	}
	if fresh {
		a.fresh = append(a.fresh, in)
	}
	a.keys = append(a.keys, in.Key)
}

// pass moves batch's inputs into the store, in order, up to the first that fails
// (its error is returned; the drain tries it again later), adds them to stored, and
// returns how many it moved.
func (s *spooler) pass(ctx context.Context, batch []conversation.Input, failures map[string]int, tried map[string]bool, stored *arrivals) (int, error) {
	for i, in := range batch {
		how, err := s.unspool(ctx, in, tried)
		if err != nil && !storeDown(err) && ctx.Err() == nil {
			if failures[in.ID]++; failures[in.ID] >= maxUnspoolFailures {
				// It will never go in: keeping it would hold every later input
				// back in the spool.
				s.log.Error("spooled input cannot be stored; dropped", conversation.LogKeyInput, in.ID, conversation.LogKeyThread, in.Key.String(), "kind", in.Kind, "error", err)
				if err = s.cfg.Spool.Remove(ctx, in.ID); err == nil {
					s.limits.spool(in, -1, nil)
				}
			}
		}
		if how != dropped { // announced even when the spool could not let go of it
			stored.add(in, how == storedNow, s.cfg.Now())
		}
		if err != nil {
			if ctx.Err() == nil {
				s.log.Warn("spooled input not moved yet; retrying", conversation.LogKeyInput, in.ID, "error", err)
			}
			return i, err
		}
	}
	return len(batch), nil
}

// announce tells this process's workers of the inputs in a, and empties it: each
// input the drain stored, a person's newer message, stops the turn running in its
// thread (stop), and then each thread is started (kick), once. No turn begins before
// every stop is made, so that the inputs announced together never stop each other's
// turns.
func (s *spooler) announce(a *arrivals) {
	for _, in := range a.fresh {
		s.stop(in)
	}
	kicked := make(map[conversation.Key]bool, len(a.keys))
	for _, k := range a.keys {
		if !kicked[k] {
			kicked[k] = true
			s.kick(k)
		}
	}
	*a = arrivals{}
}

// unspooled says what unspool did with a spooled input.
type unspooled int

const (
	// dropped: a reply in a thread the bot is not part of; not stored.
	dropped unspooled = iota
	// storedNow: stored by this call.
	storedNow
	// storedBefore: found stored (an earlier attempt's commit whose reply was lost,
	// or the Submit's that spooled it); it stops no turn, being maybe a copy of an
	// input older than the running turn's.
	storedBefore
)

// unspool moves one spooled input into the store, and says how (the caller announces
// it): a thread reply without a mention is checked then (Submit could not), and one for
// a thread the bot is not part of is dropped. Each store call is bounded by
// unspoolTimeout, so that a store call that hangs neither blocks the drain for good nor
// holds up Shutdown.
func (s *spooler) unspool(ctx context.Context, in conversation.Input, tried map[string]bool) (unspooled, error) {
	keep, how := true, dropped
	if m := in.Message; m != nil && !m.Mentioned && !m.Direct && !s.threads.holds(in.Key) {
		if err := s.retryStore(ctx, "check a spooled input's thread", func(ctx context.Context) error {
			var err error
			keep, err = within(ctx, unspoolTimeout, func(ctx context.Context) (bool, error) { return s.cfg.Store.Exists(ctx, in.Key) })
			return err
		}); err != nil {
			return dropped, err
		}
	}
	if keep {
		var inserted bool
		err := s.retryStore(ctx, "store a spooled input", func(ctx context.Context) (err error) {
			inserted, err = within(ctx, unspoolTimeout, func(ctx context.Context) (bool, error) { return s.cfg.Store.Enqueue(ctx, in) })
			if err != nil {
				tried[in.ID] = true
			}
			return err
		})
		if err != nil {
			return dropped, err
		}
		if inserted || tried[in.ID] {
			// Counted as pending before the spool lets go of it: should that fail, the
			// next pass finds it stored, a duplicate, and starts its thread as below.
			// Not inserted, an earlier attempt stored it, most likely (should another
			// process have, it counts twice until its turn: the safe side of the
			// limits).
			s.limits.stored(in, nil)
		}
		delete(tried, in.ID)
		// Stored already, maybe by an attempt whose commit's reply was lost (this
		// drain's, or that of the Submit that spooled it), its thread is started
		// all the same rather than left to the sweep (a worker finds what is
		// pending, if anything).
		how = storedBefore
		if inserted {
			how = storedNow
		}
	}
	if err := s.cfg.Spool.Remove(ctx, in.ID); err != nil {
		return how, fmt.Errorf("remove from the spool: %w", err)
	}
	s.limits.spool(in, -1, nil)
	return how, nil
}

// resume starts the drain at start when inputs were left in the spool by an
// earlier run of the process: they go into the store before any new input does.
func (s *spooler) resume(ctx context.Context) {
	if s.cfg.Spool == nil {
		return
	}
	n, err := s.cfg.Spool.Len(ctx)
	switch {
	case err != nil:
		s.log.Error("spool not read; its inputs wait for the next start", "error", err)
	case n > 0:
		s.log.Warn("moving inputs spooled while the store was unavailable into it", "count", n)
		s.mu.Lock()
		s.spooling = true
		s.startDrainLocked(s.bgCtx)
		s.mu.Unlock()
	}
}
