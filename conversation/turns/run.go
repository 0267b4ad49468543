package turns

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/threadwright/threadwright/conversation"
)

// Run is one turn in progress: its input, the lease it runs under, and its posts.
type Run struct {
	In    conversation.Input
	lease conversation.Lease
	Log   *slog.Logger
	th    *thread
	Out   *Outbox
	end   turnEnd // for Metrics
	// saved is the thread's workflow state as last loaded or saved by this run: what
	// the next save's webhook events are the change from (conversation/workflowrun/events.go).
	saved savedState
	// meter counts the run's model usage by model (conversation/usage_meter.go); its context
	// carries it.
	meter *conversation.UsageMeter
	// svc is the service that runs the turn.
	svc *Runtime
}

// Final returns the context of the turn's final writes (its reply, cards, save): not
// cancelled with the turn's (a stop, a timeout), bounded by Config.FinalTimeout.
func (r *Run) Final(ctx context.Context) (context.Context, context.CancelFunc) {
	return r.svc.final(ctx)
}

// Load loads the turn's checkpoint, retrying while the store is unavailable.
// Errors: conversation.ErrNotFound; the store's.
func (r *Run) Load(ctx context.Context) (*conversation.Checkpoint, error) { return r.svc.load(ctx, r) }

// Finish ends the turn with e, saving conv's new state and messages (see finishTurn).
func (r *Run) Finish(ctx context.Context, conv conversation.Conversation, e Ending) error {
	return r.svc.finishTurn(ctx, r, conv, e)
}

// Drop ends the turn without a save, its input finished as status (dropped, failed,
// or done when nothing changed).
func (r *Run) Drop(ctx context.Context, status conversation.InputStatus) error {
	return r.svc.finish(ctx, r, status)
}

// Checkpoint saves turn under the run's lease without ending the turn (a pipeline's
// progress), retrying while the store is unavailable.
func (r *Run) Checkpoint(ctx context.Context, turn conversation.Turn) (conversation.Saved, error) {
	return r.svc.storeSave(ctx, r, turn)
}

// AllowStop marks the turn as one a person may stop (Stop, or a newer message).
func (r *Run) AllowStop() { r.svc.allowStop(r.In.Key) }

// AllowRunStop marks the turn as working on pipeline run id, which its Stop button
// may stop; a newer message does not.
func (r *Run) AllowRunStop(id string) { r.svc.allowRunStop(r.In.Key, id) }

// Freeze makes the turn no longer stoppable: its answer is ready.
func (r *Run) Freeze() { r.svc.freeze(r.In.Key) }

// SetStatus shows status in the thread; failing to is logged, never fatal.
func (r *Run) SetStatus(ctx context.Context, status string) {
	r.svc.setStatus(ctx, r.Log, r.In.Key, status)
}

// ClearStatus clears the thread's status, even when the turn's context has ended.
func (r *Run) ClearStatus() { r.svc.clearStatus(r.Log, r.In.Key) }

// ShuttingDown reports whether the service is shutting down: the turn's input stays
// pending and runs again.
func (r *Run) ShuttingDown() bool { return r.svc.ctx.Err() != nil }

// ShutdownErr is the error of the service's context once it is shutting down (nil
// before): the cause a turn that gives up for the shutdown returns.
func (r *Run) ShutdownErr() error { return r.svc.ctx.Err() }

// MeteredUsage returns the usage records of a save of state st that is not the end
// of the turn (a pipeline's checkpoint): the model calls metered since the last
// save, by model, or u under the main model when none was metered.
func (r *Run) MeteredUsage(st conversation.State, u conversation.Usage) []conversation.UsageRecord {
	byModel, metered := r.meter.Take()
	return r.svc.usageRecords(r, st, u, byModel, metered, 0)
}

// InputWaiting reports whether another input of the thread waits behind this turn.
func (r *Run) InputWaiting() bool { return r.svc.waiting(r.In.Key) }

// RetryStore runs op, retrying with backoff while the store is unavailable, until ctx
// ends; what names the operation in the log.
func (r *Run) RetryStore(ctx context.Context, what string, op func(context.Context) error) error {
	return r.svc.retryStore(ctx, what, op)
}

// Forward submits in, an input that continues this one (a channel command forwarded
// to its thread), without the flood limits that admitted this one.
func (r *Run) Forward(ctx context.Context, in conversation.Input) (bool, error) {
	return r.svc.submit(ctx, in, false)
}

// runInput runs the turn of in under t's lease, bounded by TurnTimeout, and logs how
// it ended. It returns the turn's error when the input stays pending.
func (s *Runtime) runInput(t *thread, in conversation.Input) error {
	log := s.log.With(conversation.LogKeyThread, in.Key.String(), conversation.LogKeyInput, in.ID)
	stoppable, stop := context.WithCancelCause(s.ctx)
	defer stop(nil)
	ctx, cancel := context.WithTimeout(stoppable, s.cfg.TurnTimeout)
	defer cancel()
	ctx, log, span := startTurn(ctx, in, log) // trace.go
	s.startRun(t, in, stop)
	defer s.endRun(t)
	r := &Run{In: in, lease: s.leaseOf(t), Log: log, th: t, meter: &conversation.UsageMeter{}, svc: s}
	ctx = conversation.WithUsageMeter(ctx, r.meter)
	r.Out = s.newOutbox(ctx, r)
	start := s.cfg.Now()
	s.turnStarted(r, start)
	err := s.runTurn(ctx, r)
	span.end(ctx, err, s.ctx.Err() != nil)
	s.turnEnded(ctx, r, start, err)
	switch {
	case err == nil:
		log.Info("turn finished", "duration", s.cfg.Now().Sub(start), "attempt", in.Attempts)
	case errors.Is(err, conversation.ErrLeaseLost):
		log.Warn("turn abandoned: its lease was lost; the new holder runs the input", "error", err)
	case s.ctx.Err() != nil:
		log.Warn("turn cancelled by shutdown; input stays pending", "error", err)
	default:
		log.Error("turn failed; input stays pending", "error", err)
	}
	return err
}

// Status texts shown in the thread while a turn runs.
const (
	StatusThinking = "is thinking…"
)

// StatusInterval is the least time between two progress updates of one turn, to stay
// well inside Slack's rate limits.
const StatusInterval = time.Second

// final returns the context of a turn's final writes (its reply, cards, save): not
// cancelled with the turn's (a stop, a timeout), bounded by FinalTimeout.
func (s *Runtime) final(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), s.cfg.FinalTimeout)
}

// load loads r's checkpoint, retrying while the store is unavailable. Errors:
// ErrNotFound; the store's.
func (s *Runtime) load(ctx context.Context, r *Run) (*conversation.Checkpoint, error) {
	var cp *conversation.Checkpoint
	err := s.retryStore(ctx, "load the checkpoint", func(ctx context.Context) error {
		var err error
		cp, err = s.cfg.Store.Load(ctx, r.In.Key, s.cfg.HistoryMessages)
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

// runTurn runs r's turn: an input tried more than MaxAttempts times is given up
// (giveUp), any other goes to the handler. A pipeline past MaxAttempts halts itself
// (runPipeline), saving its state; only when even that keeps failing is it given up
// here.
func (s *Runtime) runTurn(ctx context.Context, r *Run) error {
	in := r.In
	if limit := s.cfg.MaxAttempts; in.Attempts > limit && in.Kind != conversation.KindPipeline || in.Attempts > limit+2 {
		return s.giveUp(ctx, r)
	}
	return s.handler.Handle(ctx, r)
}

// giveUp ends an input that was tried MaxAttempts times (its turns kept failing, or
// its workers kept dying): the person is told, and the input is finished as failed.
func (s *Runtime) giveUp(ctx context.Context, r *Run) error {
	fctx, cancel := s.final(ctx)
	defer cancel()
	r.Log.Error("input given up after repeated attempts", "attempts", r.In.Attempts-1)
	text := fmt.Sprintf("Sorry, I could not finish this after %d attempts, so I stopped trying. Please try again.", s.cfg.MaxAttempts)
	if r.In.Message != nil {
		text = fmt.Sprintf("Sorry, I gave up on this message after %d attempts. Please send it again.", s.cfg.MaxAttempts)
	}
	user := ""
	switch {
	case r.In.Action != nil:
		user = r.In.Action.UserID
	case r.In.Command != nil:
		user = r.In.Command.UserID
	}
	var err error
	if r.In.Key.ThreadTS == "" || r.In.Kind == conversation.KindAction {
		if user != "" {
			err = s.cfg.Messenger.PostEphemeral(fctx, r.In.Key, user, text)
		}
	} else {
		_, err = r.Out.PostReply(fctx, text, false, false)
	}
	if errors.Is(err, conversation.ErrLeaseLost) {
		return err
	}
	if err != nil {
		r.Log.Warn("notice of a given-up input not posted", "error", err)
	}
	return s.finish(fctx, r, conversation.InputFailed)
}

// setStatus shows status in the thread; failing to is logged, never fatal.
func (s *Runtime) setStatus(ctx context.Context, log *slog.Logger, key conversation.Key, status string) {
	if err := s.cfg.Messenger.SetStatus(ctx, key, status); err != nil {
		log.Debug("status not shown", "status", status, "error", err)
	}
}

// clearStatus clears the thread's status even when the turn's context has ended.
func (s *Runtime) clearStatus(log *slog.Logger, key conversation.Key) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s.setStatus(ctx, log, key, "")
}
