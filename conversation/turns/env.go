package turns

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/threadwright/threadwright/conversation"
)

// env is what every part of the runtime works with: its configuration (defaults
// filled in, the store traced, the messenger scrubbing), its log, the threads this
// process holds, and the context of its turns.
type env struct {
	cfg     Config
	log     *slog.Logger
	threads *threadSet
	// ctx is the parent of every turn; cancelled (with errClosing) when Shutdown
	// gives up waiting.
	ctx context.Context
	// bg runs the background work (the heartbeat, the sweep, the spool's drain, the
	// notices of refused inputs) on bgCtx; Shutdown ends it and waits for it.
	bg    *sync.WaitGroup
	bgCtx context.Context
}

// errClosing is the cause of the turns cancelled by Shutdown.
var errClosing = errors.New("conversation: shutting down")

// retryStore runs op, retrying with backoff while it fails with ErrUnavailable, until
// it succeeds, fails otherwise, or ctx ends (its deadline bounds the retries). Each
// retry is logged at warn. An error of op once ctx has ended wraps ctx.Err() too: a
// store may report its statement cancelled (PostgreSQL's 57014 query_canceled, which
// lib/pq returns when the context ends mid-statement) rather than the context's end,
// and a store too slow to answer by the deadline counts as down (storeDown).
func (e *env) retryStore(ctx context.Context, what string, op func(context.Context) error) error {
	bo := storeBackoff(-1)
	for attempt := 1; ; attempt++ {
		err := op(ctx)
		if err != nil && ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
			return fmt.Errorf("%w (%w)", err, ctx.Err())
		}
		if err == nil || !errors.Is(err, conversation.ErrUnavailable) || ctx.Err() != nil {
			return err
		}
		wait := bo.NextBackOff()
		if d, ok := ctx.Deadline(); ok && e.cfg.Now().Add(wait).After(d) {
			return err
		}
		e.log.Warn("store unavailable; retrying", "op", what, "attempt", attempt, "wait", wait, "error", err)
		if !sleepCtx(ctx, wait) {
			return err
		}
	}
}

// final returns the context of a turn's final writes (its reply, cards, save): not
// cancelled with the turn's (a stop, a timeout), bounded by FinalTimeout.
func (e *env) final(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), e.cfg.FinalTimeout)
}

// setStatus shows status in the thread; failing to is logged, never fatal.
func (e *env) setStatus(ctx context.Context, log *slog.Logger, key conversation.Key, status string) {
	if key.ThreadTS == conversation.MessagesTab {
		return // no thread to show it in
	}
	if err := e.cfg.Messenger.SetStatus(ctx, key, status); err != nil {
		log.Debug("status not shown", "status", status, "error", err)
	}
}

// statusClearTimeout bounds a turn's clear of its thread's status.
const statusClearTimeout = 5 * time.Second

// clearStatus clears the thread's status, even when the turn's context has ended,
// within d.
func (e *env) clearStatus(log *slog.Logger, key conversation.Key, d time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	e.setStatus(ctx, log, key, "")
}

// showQueued shows StatusQueued in the thread of key, on a short context of its own,
// and reports whether it tried; a failure is logged at debug. It shows it only while
// the thread has an input no turn has begun (threadSet.awaits): a worker that waits
// for a slot after its turn, only to find nothing pending, would otherwise leave a
// finished thread showing it.
func (e *env) showQueued(key conversation.Key) bool {
	if !e.threads.awaits(key) {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	e.setStatus(ctx, e.log.With(conversation.LogKeyThread, key.String()), key, StatusQueued)
	return true
}
