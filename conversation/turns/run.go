package turns

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"runtime/debug"
	"slices"
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
	meter *conversation.UsageMeter
	// session is what the turn's end sets on its agent session (session.go); nil
	// when it sets none.
	session *sessionPlan
	env     *env
	intake  *intake
	// rewrites change stored messages' texts in the turn's save (RewriteMessages).
	rewrites []conversation.MessageRewrite
}

// RewriteMessages changes the stored texts of messages, by their Slack ts, in the
// turn's save (Run.Finish; conversation.Turn.Rewrite): an edited or deleted message
// (docs/architecture.md, "Edits and deletions").
func (r *Run) RewriteMessages(rw ...conversation.MessageRewrite) {
	r.rewrites = append(r.rewrites, rw...)
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
func (r *Run) ClearStatus() {
	r.takeQueued()
	r.env.clearStatus(r.Log, r.In.Key, statusClearTimeout)
}

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
	e.threads.startRun(t, in, stop, e.policy(in.Key) == conversation.DoubleTextingInterrupt)
	defer e.threads.endRun(t)
	r := &Run{In: in, lease: e.threads.leaseOf(t), Log: log, th: t, meter: &conversation.UsageMeter{}, env: e.env, intake: e.intake}
	ctx = conversation.WithUsageMeter(ctx, r.meter)
	r.Out = newOutbox(ctx, e.cfg.Messenger, in, e.threads.takeRetaken(t, in.ID), log,
		func(ctx context.Context) error { return e.leases.confirm(ctx, t) },
		func() bool { return e.threads.isLost(t) })
	start := e.cfg.Now()
	e.turnStarted(r, start)
	e.sessionStart(ctx, r)
	err := e.runTurn(ctx, r)
	if err == nil {
		r.endSession() // unless Finish did
	}
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
	return e.handle(ctx, r)
}

// handle runs r's turn in the Handler, a panic in it (a bug one input's content
// triggers) made the turn's error, its stack logged: that input stays pending, is
// tried again and given up after MaxAttempts, and the process's other turns go on.
// A panic in a goroutine the Handler starts is not caught here.
func (e *envelope) handle(ctx context.Context, r *Run) (err error) {
	defer func() {
		if v := recover(); v != nil {
			r.Log.Error("turn panicked", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			err = fmt.Errorf("turn panicked: %v", v)
		}
	}()
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

// saveAttempts bounds how often a turn's save is rebased onto a newer version after
// ErrConflict (another turn wrote the conversation meanwhile: a pipeline checkpoint).
const saveAttempts = 3

// Ending is what a turn leaves in the thread and the checkpoint (finishTurn).
type Ending struct {
	// Msgs are the turn's new messages before its reply: the thread's messages from
	// before the bot joined, the person's message, artifact revisions.
	Msgs []conversation.Message
	// Reply is the turn's last message ("" for none); posted says it is in the thread
	// already, its last message at ts (a streamed answer, or an earlier run's).
	Reply  string
	Posted bool
	TS     string
	// Answer marks reply as the assistant's answer: tagged as the turn's answer (a
	// re-run finds it, docs/architecture.md, "Exactly one answer") and saved with meta
	// and the turn's usage.
	Answer bool
	// Notice marks an answer that is a notice (Tag.Notice): an error reply, a
	// stopped turn's note.
	Notice bool
	Meta   json.RawMessage
	Usage  conversation.Usage
	// Update changes the state saved. rebase, for a turn that only sets some fields
	// (the assistant's), applies it to the newer version after ErrConflict; a
	// workflow turn's state was computed from the version it loaded and is not.
	Update func(*conversation.State)
	Rebase bool
	// Enqueue are the inputs that follow the turn (a pipeline's next part).
	Enqueue []conversation.Input
}

// Finish ends every turn that saves (the assistant's, a workflow step, a
// pipeline part; docs/architecture.md, "Data flow of one Slack event", step 4): it
// posts the reply unless it is in the thread already, clears the thread's status,
// deletes what an earlier run of the input left half-posted, sets the agent
// session's status (session.go), and saves the new messages and state with an
// optimistic version check, marking the input done, enqueuing what follows, and
// freeing the lease when nothing of the thread is left pending (else the scheduler
// begins the next input). Every Slack write of the turn comes before that save.
// ctx is the final writes' context (Run.Final). A reply that could not be
// posted is still saved, so nothing is lost. Errors: ErrLeaseLost; the store's, when
// it stayed unavailable until ctx ended or the conflict did not resolve.
func (r *Run) Finish(ctx context.Context, conv conversation.Conversation, e Ending) error {
	r.end.notice = e.Notice
	if e.Reply != "" && !e.Posted {
		ts, err := r.Out.Post(ctx, e.Reply, e.Answer, e.Answer, e.Notice)
		if errors.Is(err, conversation.ErrLeaseLost) {
			return err
		}
		if err != nil {
			r.Log.Error("reply not posted; saving it in the checkpoint", "error", err)
		}
		e.TS = ts
	}
	msgs, rewrites := e.Msgs, r.rewrites
	if rv := r.Out.Revising(); e.Reply != "" && e.Answer && rv != "" && e.TS == rv {
		// The answer replaced the earlier one in place: that message's new text.
		rewrites = append(slices.Clip(rewrites), conversation.MessageRewrite{SlackTS: rv, Text: e.Reply})
	} else if e.Reply != "" {
		m := conversation.Message{Role: conversation.RoleAssistant, Text: e.Reply, SlackTS: e.TS, Meta: e.Meta}
		if e.Answer {
			m.PromptTokens, m.CompletionTokens = e.Usage.PromptTokens, e.Usage.CompletionTokens
		}
		msgs = append(msgs, m)
	}
	r.ClearStatus()
	r.Out.cleanup(ctx, r.Log)
	attempts := 1
	if e.Rebase {
		attempts = saveAttempts
	}
	byModel, metered := r.meter.Take()
	for i := 0; ; i++ {
		st := conv.State
		st.Retry = nil // a Retry is for the failure of the thread's last turn (update sets it)
		if e.Update != nil {
			e.Update(&st)
		}
		r.sessionUpdate(&st, len(e.Enqueue) > 0)
		r.endSession() // before the save that may free the lease
		st.Turns++
		st.PromptTokens += e.Usage.PromptTokens
		st.CompletionTokens += e.Usage.CompletionTokens
		_, err := r.save(ctx, conversation.Turn{Key: r.In.Key, Version: conv.Version, State: st, Append: msgs, InputID: r.In.ID, Merged: r.In.BurstIDs(), Enqueue: e.Enqueue, Rewrite: rewrites,
			Usage: r.usageRecords(st, e.Usage, byModel, metered, 1), Release: true})
		if !errors.Is(err, conversation.ErrConflict) || i+1 >= attempts {
			if err != nil {
				return fmt.Errorf("save turn: %w", err)
			}
			return nil
		}
		var cp *conversation.Checkpoint
		if lerr := r.env.retryStore(ctx, "reload after a conflict", func(ctx context.Context) error {
			var err error
			cp, err = r.env.cfg.Store.Load(ctx, r.In.Key, 0)
			return err
		}); lerr != nil {
			return fmt.Errorf("save turn: reload after conflict: %w", lerr)
		}
		r.saved = snapshot(cp.Conversation.State)
		conv = cp.Conversation
	}
}

// Checkpoint saves turn under the run's lease without ending the turn (a pipeline's
// progress), with its webhook events, retrying while the store is unavailable.
func (r *Run) Checkpoint(ctx context.Context, turn conversation.Turn) (conversation.Saved, error) {
	turn.Release = false
	return r.save(ctx, turn)
}

// save is Checkpoint; turn.Release (the turn's last save, Finish) also frees the
// lease when nothing of the thread is left pending, which the scheduler then does
// not do (threadSet.releasing).
func (r *Run) save(ctx context.Context, turn conversation.Turn) (conversation.Saved, error) {
	turn.Lease = r.lease
	turn.Release = turn.Release && r.th != nil && turn.Lease.Held()
	turn.Events = append(turn.Events, r.turnEvents(turn)...)
	if turn.Release {
		r.env.threads.releasing(r.th)
	}
	var saved conversation.Saved
	unanswered := false // an attempt got no answer: it may have committed
	err := r.env.retryStore(ctx, "save the turn", func(ctx context.Context) error {
		var err error
		saved, err = r.env.cfg.Store.Save(ctx, turn)
		unanswered = unanswered || errors.Is(err, conversation.ErrUnavailable)
		return err
	})
	lost := errors.Is(err, conversation.ErrLeaseLost)
	if unanswered && (errors.Is(err, conversation.ErrConflict) || turn.Release && lost) {
		if s, ok := r.savedUnanswered(ctx, turn, lost); ok {
			saved, err = s, nil
		}
	}
	if turn.Release {
		r.env.threads.released(r.th, err == nil && saved.Released)
	}
	if err == nil {
		r.saved = snapshot(turn.State)
	}
	return saved, err
}

// pendingProbe bounds the pending inputs savedUnanswered reads: the turn's input,
// when still pending, is among the first of them (its thread's inputs begin in Seq
// order).
const pendingProbe = 50

// savedUnanswered reports whether turn, a save whose retry failed after an attempt
// got no answer, had been committed by that attempt, whose reply was lost (a
// connection cut after the commit). Store.Load, and for a last save Store.Pending,
// are retried while the store is unavailable. It tells:
//   - a turn's last save (Turn.Release): its retry finds the lease gone (lost,
//     ErrLeaseLost: the commit freed it) or, when the commit kept it (an input was
//     pending), the conversation past turn.Version (ErrConflict). It was committed
//     when the conversation is past turn.Version and turn's input is no longer
//     pending. An input that a worker which took the lease over finished meanwhile
//     also counts as saved: it is done either way.
//   - a checkpoint (a save that keeps the lease, Run.Checkpoint): its retry finds the
//     conversation at a newer version (ErrConflict). It was committed when the
//     conversation is at turn.Version+1 with turn's state (sameJSON): the retry
//     passed the lease's fence, so no other holder wrote meanwhile.
//
// When committed it returns turn's Saved, Released when lost (FirstSeq 0: not known).
// Otherwise, or when the store does not answer, it reports false: the lease was lost,
// and its new holder runs the input, or the conflict was another writer's.
func (r *Run) savedUnanswered(ctx context.Context, turn conversation.Turn, lost bool) (conversation.Saved, bool) {
	if turn.Release && turn.InputID == "" {
		return conversation.Saved{}, false
	}
	var (
		cp      *conversation.Checkpoint
		pending []conversation.Input
	)
	err := r.env.retryStore(ctx, "look for a save whose reply was lost", func(ctx context.Context) error {
		var err error
		if cp, err = r.env.cfg.Store.Load(ctx, turn.Key, 0); err != nil || !turn.Release {
			return err
		}
		pending, err = r.env.cfg.Store.Pending(ctx, turn.Key, pendingProbe)
		return err
	})
	if err != nil {
		if !errors.Is(err, conversation.ErrNotFound) {
			r.Log.Warn("whether the turn's save was committed is not known; taken as not", "error", err)
		}
		return conversation.Saved{}, false
	}
	committed := cp.Conversation.Version == turn.Version+1 && sameJSON(cp.Conversation.State, turn.State)
	if turn.Release {
		committed = cp.Conversation.Version > turn.Version && !slices.ContainsFunc(pending, func(in conversation.Input) bool { return in.ID == turn.InputID })
	}
	if !committed {
		return conversation.Saved{}, false
	}
	r.Log.Info("the turn's save was committed before its reply was lost; its retry found it done", "version", turn.Version+1, "freed", lost, "checkpoint", !turn.Release)
	return conversation.Saved{ConversationID: cp.Conversation.ID, Version: turn.Version + 1, Released: lost}, true
}

// sameJSON reports whether a and b encode to the same JSON value: objects compared by
// their members, not their order (Postgres's jsonb orders them its own way, inside a
// json.RawMessage too), strings as json.Marshal writes them.
func sameJSON(a, b any) bool {
	va, okA := jsonValue(a)
	vb, okB := jsonValue(b)
	return okA && okB && reflect.DeepEqual(va, vb)
}

// jsonValue returns v encoded as JSON and decoded into maps, slices and scalars, and
// whether both steps succeeded.
func jsonValue(v any) (any, bool) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, false
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, false
	}
	return out, true
}

// Drop ends the turn without a save, its input finished as status (dropped,
// failed, or done when nothing changed), under its lease, retrying while the store
// is unavailable.
func (r *Run) Drop(ctx context.Context, status conversation.InputStatus) error {
	r.end.status = status
	fctx, cancel := r.Final(ctx)
	defer cancel()
	if r.takeQueued() {
		r.env.clearStatus(r.Log, r.In.Key, statusClearTimeout) // no turn replaces the input's "is waiting in line…"
	}
	r.Out.cleanup(fctx, r.Log)
	err := r.env.retryStore(fctx, "finish the input", func(ctx context.Context) error {
		return r.env.cfg.Store.Finish(ctx, r.lease, r.In.ID, status)
	})
	if err != nil {
		return fmt.Errorf("finish input as %s: %w", status, err)
	}
	return nil
}

// MeteredUsage returns the usage records of a save of state st that is not the end
// of the turn (a pipeline's checkpoint): the model calls metered since the last
// save, by model, or u under the main model when none was metered.
func (r *Run) MeteredUsage(st conversation.State, u conversation.Usage) []conversation.UsageRecord {
	byModel, metered := r.meter.Take()
	return r.usageRecords(st, u, byModel, metered, 0)
}

// usageRecords returns the ledger rows of a turn of r with state st: one per model in
// byModel (the run's UsageMeter since its last save) that used tokens. When metered
// is false (no call went through agents.Client, as with playground/demo) the turn's
// usage u is written as one row under the main model (Config.Model). turns (1 for a
// finished turn, 0 for a pipeline's checkpoint) goes on one row only: the main
// model's when it was called, else the first model's; the others count 0. A turn
// that used no tokens writes no row.
func (r *Run) usageRecords(st conversation.State, u conversation.Usage, byModel []conversation.ModelUsage, metered bool, turns int) []conversation.UsageRecord {
	if !metered {
		byModel = []conversation.ModelUsage{{Model: r.env.cfg.Model, Usage: u}}
	}
	workflow := ""
	if st.Workflow != nil {
		workflow = st.Workflow.Name
	}
	var recs []conversation.UsageRecord
	for _, m := range byModel {
		if m.Usage.PromptTokens == 0 && m.Usage.CompletionTokens == 0 {
			continue
		}
		rec := conversation.UsageRecord{UserID: r.In.User(), Workflow: workflow, Model: m.Model,
			PromptTokens: m.Usage.PromptTokens, CompletionTokens: m.Usage.CompletionTokens}
		if m.Model == r.env.cfg.Model {
			recs = append([]conversation.UsageRecord{rec}, recs...)
		} else {
			recs = append(recs, rec)
		}
	}
	if len(recs) > 0 {
		recs[0].Turns = turns
	}
	return recs
}

// turnEvents returns the webhook events of saving turn after r's last load or save
// (none without Config.Events).
func (r *Run) turnEvents(turn conversation.Turn) []conversation.Event {
	if r.env.cfg.Events == nil {
		return nil
	}
	prev := conversation.State{Workflow: r.saved.wf, Retry: r.saved.retry}
	return r.env.cfg.Events(turn.Key, prev, turn.State, r.In.User(), r.env.cfg.Now())
}
