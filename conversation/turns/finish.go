package turns

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/threadwright/threadwright/conversation"
)

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
// deletes what an earlier run of the input left half-posted, and saves the new
// messages and state with an optimistic version check, marking the input done and
// enqueuing what follows. ctx is the final writes' context (Run.Final); the
// scheduler releases the lease once the turn returns. A reply that could not be
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
	msgs := e.Msgs
	if e.Reply != "" {
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
		st.Turns++
		st.PromptTokens += e.Usage.PromptTokens
		st.CompletionTokens += e.Usage.CompletionTokens
		_, err := r.Checkpoint(ctx, conversation.Turn{Key: r.In.Key, Version: conv.Version, State: st, Append: msgs, InputID: r.In.ID, Enqueue: e.Enqueue,
			Usage: r.usageRecords(st, e.Usage, byModel, metered, 1)})
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
	turn.Lease = r.lease
	turn.Events = append(turn.Events, r.turnEvents(turn)...)
	var saved conversation.Saved
	err := r.env.retryStore(ctx, "save the turn", func(ctx context.Context) error {
		var err error
		saved, err = r.env.cfg.Store.Save(ctx, turn)
		return err
	})
	if err == nil {
		r.saved = snapshot(turn.State)
	}
	return saved, err
}

// Drop ends the turn without a save, its input finished as status (dropped,
// failed, or done when nothing changed), under its lease, retrying while the store
// is unavailable.
func (r *Run) Drop(ctx context.Context, status conversation.InputStatus) error {
	r.end.status = status
	fctx, cancel := r.Final(ctx)
	defer cancel()
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
