package turns

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/threadwright/threadwright/conversation"
)

// envelope runs one input's turn (docs/architecture.md, "Data flow of one Slack
// event", step 4): it makes the turn's Run, bounds it by TurnTimeout, gives up an
// input tried too often, and hands the rest to the Handler; its trace span, its
// metrics and its log line tell how it ended.
type envelope struct {
	*env
	handler Handler
	leases  leases
	intake  *intake
}

// runInput runs the turn of in under t's lease, bounded by TurnTimeout, and logs how
// it ended. It returns the turn's error when the input stays pending.
func (e *envelope) runInput(t *thread, in conversation.Input) error {
	log := e.log.With(conversation.LogKeyThread, in.Key.String(), conversation.LogKeyInput, in.ID)
	stoppable, stop := context.WithCancelCause(e.ctx)
	defer stop(nil)
	ctx, cancel := context.WithTimeout(stoppable, e.cfg.TurnTimeout)
	defer cancel()
	ctx, log, span := startTurn(ctx, in, log) // trace.go
	e.threads.startRun(t, in, stop)
	defer e.threads.endRun(t)
	r := &Run{In: in, lease: e.threads.leaseOf(t), Log: log, th: t, meter: &conversation.UsageMeter{}, env: e.env, intake: e.intake}
	ctx = conversation.WithUsageMeter(ctx, r.meter)
	r.Out = newOutbox(ctx, e.cfg.Messenger, in, log,
		func(ctx context.Context) error { return e.leases.confirm(ctx, t) },
		func() bool { return e.threads.isLost(t) })
	start := e.cfg.Now()
	e.turnStarted(r, start)
	err := e.runTurn(ctx, r)
	span.end(ctx, err, e.ctx.Err() != nil)
	e.cfg.Metrics.TurnEnded(string(r.In.Kind), turnOutcome(ctx, r.end, err, e.ctx.Err() != nil), e.cfg.Now().Sub(start))
	switch {
	case err == nil:
		log.Info("turn finished", "duration", e.cfg.Now().Sub(start), "attempt", in.Attempts)
	case errors.Is(err, conversation.ErrLeaseLost):
		log.Warn("turn abandoned: its lease was lost; the new holder runs the input", "error", err)
	case e.ctx.Err() != nil:
		log.Warn("turn cancelled by shutdown; input stays pending", "error", err)
	default:
		log.Error("turn failed; input stays pending", "error", err)
	}
	return err
}

// turnStarted tells Metrics that r's turn started at start.
func (e *envelope) turnStarted(r *Run, start time.Time) {
	wait := time.Duration(-1)
	if r.In.Attempts <= 1 && !r.In.CreatedAt.IsZero() {
		wait = max(start.Sub(r.In.CreatedAt), 0)
	}
	e.cfg.Metrics.TurnStarted(string(r.In.Kind), wait)
}

// runTurn runs r's turn: an input tried more than MaxAttempts times is given up
// (giveUp), any other goes to the handler. A pipeline past MaxAttempts halts itself
// (conversation/workflowrun/pipeline.go), saving its state; only when even that keeps
// failing is it given up here.
func (e *envelope) runTurn(ctx context.Context, r *Run) error {
	in := r.In
	if limit := e.cfg.MaxAttempts; in.Attempts > limit && in.Kind != conversation.KindPipeline || in.Attempts > limit+2 {
		return e.giveUp(ctx, r)
	}
	return e.handler.Handle(ctx, r)
}

// giveUp ends an input that was tried MaxAttempts times (its turns kept failing, or
// its workers kept dying): the person is told, and the input is finished as failed.
func (e *envelope) giveUp(ctx context.Context, r *Run) error {
	fctx, cancel := e.final(ctx)
	defer cancel()
	r.Log.Error("input given up after repeated attempts", "attempts", r.In.Attempts-1)
	text := fmt.Sprintf("Sorry, I could not finish this after %d attempts, so I stopped trying. Please try again.", e.cfg.MaxAttempts)
	if r.In.Message != nil {
		text = fmt.Sprintf("Sorry, I gave up on this message after %d attempts. Please send it again.", e.cfg.MaxAttempts)
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
			err = e.cfg.Messenger.PostEphemeral(fctx, r.In.Key, user, text)
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
	return r.Drop(fctx, conversation.InputFailed)
}
