package turns

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// Handler runs one turn of an input (docs/architecture.md, "Durable turns"): it does
// what the input asks and ends the turn with Run.Finish (a save) or Run.Drop (none).
// It returns nil once the input is finished, and an error when the input stays
// pending to run again: the store did not answer, the service is shutting down, or
// the lease was lost (conversation.ErrLeaseLost).
type Handler interface {
	Handle(ctx context.Context, r *Run) error
}

// Status texts shown in the thread while a turn runs.
const (
	StatusThinking = "is thinking…"
	// StatusQueued is shown while a thread's input waits for a free turn slot
	// (MaxConcurrentTurns).
	StatusQueued = "is waiting in line…"
)

// StatusInterval is the least time between two progress updates of one turn, to stay
// well inside Slack's rate limits.
const StatusInterval = time.Second

// Run is one turn in progress, as its Handler sees it: its input, the lease it runs
// under, its posts (Out), and the runtime's services for the turn.
type Run struct {
	In  conversation.Input
	Log *slog.Logger
	Out *Outbox

	lease conversation.Lease
	th    *thread
	end   turnEnd // for Metrics
	// saved is the thread's workflow state as last loaded or saved by this run: what
	// the next save's webhook events are the change from (Config.Events).
	saved savedState
	// meter counts the run's model usage by model (conversation/usage_meter.go); its
	// context carries it.
	meter  *conversation.UsageMeter
	env    *env
	intake *intake
}

// savedState is what webhook events are derived from: a thread's workflow state and
// failed step (State.Retry) as stored.
type savedState struct {
	wf    *workflow.State
	retry *conversation.Input
}

// snapshot copies what st's events depend on, so that later changes of st do not
// change it.
func snapshot(st conversation.State) savedState {
	return savedState{wf: st.Workflow.Clone(), retry: st.Retry}
}

// Final returns the context of the turn's final writes (its reply, cards, save): not
// cancelled with the turn's (a stop, a timeout), bounded by Config.FinalTimeout.
func (r *Run) Final(ctx context.Context) (context.Context, context.CancelFunc) {
	return r.env.final(ctx)
}

// Load loads the turn's checkpoint (its newest Config.HistoryMessages messages),
// retrying while the store is unavailable. Errors: conversation.ErrNotFound; the
// store's.
func (r *Run) Load(ctx context.Context) (*conversation.Checkpoint, error) {
	var cp *conversation.Checkpoint
	err := r.env.retryStore(ctx, "load the checkpoint", func(ctx context.Context) error {
		var err error
		cp, err = r.env.cfg.Store.Load(ctx, r.In.Key, r.env.cfg.HistoryMessages)
		return err
	})
	if err == nil {
		r.saved = snapshot(cp.Conversation.State)
	}
	if err != nil && !errors.Is(err, conversation.ErrNotFound) {
		return nil, fmt.Errorf("load checkpoint: %w", err)
	}
	return cp, err
}

// AllowStop marks the turn as one a person may stop (Stop, or a newer message).
func (r *Run) AllowStop() { r.env.threads.markRun(r.In.Key, func(a *active) { a.stoppable = true }) }

// AllowRunStop marks the turn as working on pipeline run id, which its Stop button
// may stop; a newer message does not.
func (r *Run) AllowRunStop(id string) {
	r.env.threads.markRun(r.In.Key, func(a *active) { a.stoppable, a.run = true, id })
}

// Freeze makes the turn no longer stoppable: its answer is ready, and posting and
// saving it must not be cut short.
func (r *Run) Freeze() { r.env.threads.markRun(r.In.Key, func(a *active) { a.stoppable = false }) }

// SetStatus shows status in the thread; failing to is logged, never fatal.
func (r *Run) SetStatus(ctx context.Context, status string) {
	r.env.setStatus(ctx, r.Log, r.In.Key, status)
}

// ClearStatus clears the thread's status, even when the turn's context has ended.
func (r *Run) ClearStatus() { r.env.clearStatus(r.Log, r.In.Key) }

// ShuttingDown reports whether the runtime is shutting down: the turn's input stays
// pending and runs again.
func (r *Run) ShuttingDown() bool { return r.env.ctx.Err() != nil }

// ShutdownErr is the error of the runtime's context once it is shutting down (nil
// before): the cause a turn that gives up for the shutdown returns.
func (r *Run) ShutdownErr() error { return r.env.ctx.Err() }

// InputWaiting reports whether another input of the thread waits behind this turn.
func (r *Run) InputWaiting() bool { return r.env.threads.waiting(r.In.Key) }

// RetryStore runs op, retrying with backoff while the store is unavailable, until ctx
// ends; what names the operation in the log.
func (r *Run) RetryStore(ctx context.Context, what string, op func(context.Context) error) error {
	return r.env.retryStore(ctx, what, op)
}

// Forward submits in, an input that continues this one (a channel command forwarded
// to its thread), without the flood limits that admitted this one.
func (r *Run) Forward(ctx context.Context, in conversation.Input) (bool, error) {
	return r.intake.submit(ctx, in, false)
}

// NoteOverBudget records that the turn was refused by a token budget, for Metrics.
func (r *Run) NoteOverBudget() { r.end.overBudget = true }
