package workflowrun

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/render"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// The pipeline runner (docs/architecture.md, "Pipelines"; the workflow package
// documents foreach, retries, editor and model, and keeps the items' bookkeeping):
// auto artifacts are written without review, item by item, by KindPipeline inputs of
// the thread.
//
// A turn that reaches auto artifacts whose dependencies are approved marks them
// StatusRunning with their items, posts the pipeline's progress message and saves,
// in the same transaction, a KindPipeline input (Turn.Enqueue). That input's turn runs
// the items, at most PipelineConcurrency at once (and an artifact's Concurrency), and
// checkpoints each item as it finishes (and each failed try and recovery), so a
// restarted bot continues with the unfinished items only. When every item of an
// artifact has finished, its results are joined in order, it is approved, and the auto
// artifacts that waited for it start. When nothing runs any more, one more part ends
// the run and produces what follows (advance: a reviewed artifact, or the report) with
// a whole turn's time and no Stop button. Only the newest part of a run acts; an
// older one (superseded when a person's restart or Continue enqueued another) returns.
//
// A pipeline turn gives way: when another input of the thread is waiting, or half of
// TurnTimeout has passed, it starts no new item, lets the running ones finish and
// saves a new KindPipeline input behind the waiting one. People's messages and clicks
// therefore wait at most one item, and no turn outlives its claim.

// runPipeline is the turn of a KindPipeline input: it runs the running artifacts'
// unfinished items until all are done, the pipeline is stopped, or the turn gives
// way (see the package comment above).
func (t pipelineRun) runPipeline(ctx context.Context) error {
	ws := t.ws()
	if !t.mayRun(ctx, ws) {
		return nil
	}
	t.pipeline = true
	// Artifacts a restart sent back to pending, and those that waited for them (one
	// that cannot be split stays pending, and the thread is told).
	t.startAuto(ctx, workflow.Next(t.def(), ws).Start)
	if !workflow.AnyRunning(ws) {
		// The run is over: end it and produce what follows (a reviewed artifact, the
		// report) in this fresh turn, with its whole time and no Stop.
		t.endPipeline(ctx, "")
		t.pipeline = false
		return t.then(ctx, t.advance) // a failure keeps the run's end and offers Retry
	}
	t.r.AllowRunStop(conversation.RunStopPrefix + ws.Pipeline.ID)
	err := t.runItems(ctx)
	if perr := t.pausePipeline(ctx); perr != nil {
		return perr // shutting down: the input stays pending and continues after the restart
	}
	return err
}

// mayRun reports whether this part of the pipeline of ws runs: not when the run
// ended (it is cancelled, and its progress message says so), was superseded by a
// later part, waits for Continue, or was tried MaxAttempts times (it is halted).
func (t pipelineRun) mayRun(ctx context.Context, ws *workflow.State) bool {
	switch {
	case ws == nil || ws.Pipeline == nil:
		return false // a pipeline input left over from a run that ended
	case t.r.In.ID != partID(t.key, ws.Pipeline):
		return false // superseded: a later part of the run was enqueued after this one
	case ws.Status != workflow.RunRunning:
		t.endPipeline(ctx, "⏹ "+render.Tr(t.lang, "pipeline.cancelled"))
		return false
	case ws.Pipeline.Stopped():
		return false // waits for Continue
	case t.r.In.Attempts > t.s.cfg.MaxAttempts:
		// Its turns keep failing (or the bot keeps dying in them): stop retrying.
		t.m.Pipeline().Halt(ws, render.Tr(t.lang, "pipeline.attempts", t.s.cfg.MaxAttempts))
		t.log.Error("pipeline halted after repeated failures", "attempts", t.r.In.Attempts)
		poster(t).showProgress(ctx, true)
		return false
	}
	return true
}

// runItems writes the pending items of the running auto artifacts, a few at once,
// completing each artifact whose items all ended and checkpointing each item as it
// ends, until none runs or the part gives way: to a person's input waiting in the
// thread, or after half of TurnTimeout. It returns the first checkpoint's or
// completion's error, after the workers still running ended.
func (t pipelineRun) runItems(ctx context.Context) error {
	budget := t.s.cfg.Now().Add(t.s.cfg.TurnTimeout / 2)
	results := make(chan itemResult)
	inFlight := flight{}
	w := worker{agent: t.s.cfg.Agent, log: t.log, lang: t.lang, redact: t.s.redact, explain: t.s.cfg.Classify.Explain, enh: t.enhancer()}
	w.fetcher, w.noFetch = t.sourceFetcher() // pipeline_fetch.go
	var err error
	for {
		// Stopped, or out of time: nothing more is completed; the next part does it.
		if ctx.Err() == nil {
			if err = t.completeArtifacts(ctx); err != nil {
				break
			}
		}
		giveWay := t.r.InputWaiting() || t.s.cfg.Now().After(budget)
		if ctx.Err() == nil && !giveWay {
			for _, job := range t.jobs(inFlight) {
				inFlight[itemKey{job.artifact, job.index}] = true
				go func() { results <- w.run(ctx, job, results) }()
			}
		}
		if len(inFlight) == 0 {
			break
		}
		r := <-results
		t.add(r.usage)
		if !r.step {
			delete(inFlight, itemKey{r.job.artifact, r.job.index})
		}
		t.record(r, ctx.Err() != nil && !t.r.ShuttingDown() && !isStop(ctx))
		if r.cut {
			continue
		}
		if cerr := t.checkpoint(ctx); cerr != nil {
			err = cerr
			break
		}
		poster(t).showProgress(ctx, false)
	}
	for len(inFlight) > 0 { // after a failed step: let the workers end, keeping what they finished
		r := <-results
		if !r.step {
			delete(inFlight, itemKey{r.job.artifact, r.job.index})
		}
		t.add(r.usage)
		t.record(r, false)
	}
	return err
}

// jobs returns the items to start now, in workflow order, within the pipeline's and
// each artifact's concurrency, given the items running.
func (t pipelineRun) jobs(inFlight flight) []itemJob {
	limit := t.s.cfg.PipelineConcurrency
	var out []itemJob
	for _, id := range t.def().Order() {
		st := t.ws().Artifacts[id]
		if st.Status != workflow.StatusRunning {
			continue
		}
		a, _ := t.def().Artifact(id)
		artLimit := limit
		if a.Concurrency > 0 {
			artLimit = min(a.Concurrency, limit)
		}
		if a.Batch() && !st.Batched { // one write for its pending items (pipeline_batch.go)
			if job, ok := t.batchJob(a, st, inFlight); ok && len(inFlight)+len(out) < limit {
				out = append(out, job)
			}
			continue
		}
		started := 0
		for i := range st.Items {
			if len(inFlight)+len(out) >= limit || inFlight.of(id)+started >= artLimit {
				break
			}
			if st.Items[i].Status != workflow.ItemPending || inFlight[itemKey{id, i}] {
				continue
			}
			it := st.Items[i]
			out = append(out, itemJob{artifact: id, index: i, req: t.itemRequest(a, st, i), retries: a.Retries, editor: a.Editor,
				tried: it.Attempts, failures: slices.Clone(it.Failures), recovery: it.Recovery})
			started++
		}
	}
	return out
}

// record stores a worker's result in the state (workflow.Pipeline.RecordItem): a step
// (a failed try, a recovery) or the item's end. A cut item counts as an interruption
// when the turn ran out of time (interrupted true).
func (t pipelineRun) record(r itemResult, interrupted bool) {
	if r.job.index == batchIndex {
		t.recordBatch(r, interrupted)
		return
	}
	t.m.Pipeline().RecordItem(t.ws(), r.job.artifact, r.job.index, workflow.ItemEnd{
		Step: r.step, Cut: r.cut, Interrupted: interrupted, Text: r.text, Reason: r.reason,
		Attempts: r.attempts, Failures: r.failures, Recovery: r.recovery,
		Tainted: r.tainted, Refused: r.refused,
		TimeoutReason: render.Tr(t.lang, "item.timeout"),
	})
}

// completeArtifacts approves every running artifact whose items have all finished
// (none in flight): its text is the items' results joined in order, evaluated against
// its criteria, posted, and kept as a revision. Then the auto artifacts waiting for
// it start; what people review comes after the run, in its last part.
func (t pipelineRun) completeArtifacts(ctx context.Context) error {
	for {
		done := t.m.Pipeline().Finished(t.ws()) // an item in flight is pending
		if done == "" {
			return nil
		}
		if err := t.complete(ctx, done); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
		if err := t.checkpoint(ctx); err != nil {
			return err
		}
		t.startAuto(ctx, workflow.Next(t.def(), t.ws()).Start) // those that waited for it
		if err := t.checkpoint(ctx); err != nil {
			return err
		}
	}
}

// complete evaluates finished artifact id, gives it the one automatic revision a
// failing verdict gets (judgeAuto), approves it with its items joined, and posts it.
// A placeholder left in an item's text is fixed first (fixPlaceholders).
func (t pipelineRun) complete(ctx context.Context, id string) error {
	a, _ := t.def().Artifact(id)
	t.fixPlaceholders(ctx, a)
	if ctx.Err() != nil {
		return nil // stopped or out of time: it stays running, the next part completes it
	}
	st := t.ws().Artifacts[id]
	judged, err := t.judgeAuto(ctx, a, workflow.JoinItems(a, st.Items))
	switch {
	case err != nil && ctx.Err() != nil:
		return nil // stopped or out of time: left as it was, the next part completes it
	case err != nil:
		return err
	}
	// Judged (and perhaps revised) to the end: approved now even if ctx has just
	// ended, so that the next part does not judge the revised text again.
	rev, err := t.m.Pipeline().Completed(t.ws(), id, judged.eval)
	if err != nil {
		return err
	}
	if judged.why != "" {
		st.PriorEval, rev.Why = judged.prior, rev.Why+judged.why
		if judged.note != "" {
			st.Note = strings.TrimSpace(st.Note + "\n" + judged.note)
		}
	}
	t.enhancedAuto(id) // enhance.go
	t.keep(rev)
	// Posted on the final writes' context: a stop from now on must not lose the card
	// of an artifact that is approved.
	fctx, cancel := t.r.Final(ctx)
	defer cancel()
	return poster(t).renderShow(fctx, cardEvent{kind: evShow, id: id, why: supersededRewritten})
}

// pausePipeline ends a pipeline turn: the run has finished (no artifact running: the
// next part closes it), was stopped by a person, or gives way to its next part. Every
// case but the stop enqueues that part; a turn cut by shutdown returns its error
// instead, so its input stays pending.
func (t pipelineRun) pausePipeline(ctx context.Context) error {
	ws := t.ws()
	if !workflow.AnyRunning(ws) && !t.r.ShuttingDown() {
		t.continuePipeline() // the next part ends the run and goes on
		return nil
	}
	if by, ok := conversation.StoppedBy(ctx); ok {
		_ = t.m.Pipeline().Stop(ws, ws.Pipeline.ID, by.By)
		poster(t).showProgress(context.WithoutCancel(ctx), true)
		return nil
	}
	if t.r.ShuttingDown() {
		// Shutting down: the card loses its Stop until the next part runs.
		fctx, cancel := t.r.Final(ctx)
		defer cancel()
		poster(t).update(fctx, ws.Pipeline.ProgressTS, t.cards().Interrupted(ws, t.s.cfg.Now()))
		return t.r.ShutdownErr()
	}
	poster(t).showProgress(context.WithoutCancel(ctx), true) // the counts while it gives way
	t.continuePipeline()
	return nil
}

// endPipeline closes the progress message (with note, or the run's totals) and
// forgets the run.
func (t pipelineRun) endPipeline(ctx context.Context, note string) {
	ws := t.ws()
	if ws.Pipeline == nil {
		return
	}
	for _, id := range ws.Pipeline.Artifacts {
		if note == "" && ws.Artifacts[id].Status != workflow.StatusApproved {
			// A person's change sent it back (its dependency is no longer approved).
			note = "⏹ " + render.Tr(t.lang, "pipeline.ended", t.def().Title) + " " + t.cards().Tally(t.ws())
		}
	}
	if note == "" {
		note = "✓ " + render.Tr(t.lang, "pipeline.done", t.def().Title, ws.Pipeline.Elapsed(t.s.cfg.Now()).String()) + " " + t.cards().Tally(t.ws())
	}
	ctx = context.WithoutCancel(ctx)
	poster(t).update(ctx, ws.Pipeline.ProgressTS, render.NoteCard(note))
	t.m.Pipeline().End(ws)
}

// checkpoint saves the turn so far without finishing its input: what the pipeline
// finished survives a crash. The turn's messages and usage go with it.
func (t pipelineRun) checkpoint(ctx context.Context) error {
	ctx, cancel := t.r.Final(ctx)
	defer cancel()
	st := t.state
	st.PromptTokens += t.usage.PromptTokens
	st.CompletionTokens += t.usage.CompletionTokens
	saved, err := t.r.Checkpoint(ctx, conversation.Turn{Key: t.key, Version: t.conv.Version, State: st, Append: t.appended,
		Usage: t.r.MeteredUsage(st, t.usage)})
	if err != nil {
		return fmt.Errorf("checkpoint pipeline: %w", err)
	}
	t.state.PromptTokens, t.state.CompletionTokens = st.PromptTokens, st.CompletionTokens
	t.usage, t.appended = conversation.Usage{}, nil
	t.conv.Version = saved.Version
	return nil
}

// run runs one item: up to 1 + retries tries, going on after the job's earlier tries,
// the recovery agent rewriting the instructions before the last one, each try written
// then passed through the editor when the artifact has one. Each failed try but the
// last, and each recovery, is sent on steps (to be checkpointed); the item's end is
// returned.
//
// The job's writes report untrusted content and refused tool calls through a
// conversation.Taint in ctx; a fetch always reads untrusted content (fetched pages).
func (w worker) run(ctx context.Context, job itemJob, steps chan<- itemResult) itemResult {
	taint := &conversation.Taint{}
	res := w.runJob(conversation.WithTaint(ctx, taint), job, steps)
	res.tainted = job.req.Tainted || taint.Read() || job.req.Artifact.Fetch != ""
	res.refused = taint.Refused()
	return res
}

// runJob is run without the taint's bookkeeping.
func (w worker) runJob(ctx context.Context, job itemJob, steps chan<- itemResult) itemResult {
	switch {
	case job.req.Artifact.Fetch != "":
		return w.runFetch(ctx, job) // pipeline_fetch.go
	case job.index == batchIndex:
		return w.runBatch(ctx, job, steps) // pipeline_batch.go
	}
	res := itemResult{job: job, attempts: job.tried, failures: job.failures, recovery: job.recovery}
	tries := 1 + job.retries
	instructions := job.req.Instructions
	if res.recovery != nil {
		instructions = recoveredInstructions(*res.recovery)
	}
	// step reports progress (its usage goes with it) and continues with none.
	step := func() {
		s := res
		s.step = true
		steps <- s
		res.usage = conversation.Usage{}
	}
	for try := job.tried + 1; try <= tries; try++ {
		if try > 1 && try == tries && res.recovery == nil {
			rec, u, err := w.agent.Recover(ctx, job.withInstructions(instructions), res.failures)
			res.usage = res.usage.Add(u)
			switch {
			case ctx.Err() != nil:
				res.cut = true
				return res
			case err != nil:
				w.log.Warn("recovery agent failed; last try with the old instructions", "artifact", job.artifact, "item", job.index, "error", err)
			default:
				res.recovery = &rec
				instructions = recoveredInstructions(rec)
				step()
			}
		}
		text, u, err := w.write(ctx, job, instructions)
		res.usage = res.usage.Add(u)
		res.attempts = try
		if err == nil {
			res.text = text
			return res
		}
		if ctx.Err() != nil {
			res.cut, res.attempts = true, try-1
			return res
		}
		reason := w.failureReason(err)
		w.log.Info("item failed", "artifact", job.artifact, "item", job.index, "try", try, "tries", tries, "reason", reason)
		res.failures = append(slices.Clip(res.failures), reason)
		if try < tries {
			step()
		}
	}
	if len(res.failures) == 0 { // every try was used before a cut: fail as the last one did
		res.failures = []string{render.Tr(w.lang, "item.timeout")}
	}
	res.reason = res.failures[len(res.failures)-1]
	return res
}

// Retry of a pipeline's failed items (docs/workflows.md, "Failures and Retry"): the card of an
// auto artifact the pipeline finished with failed items offers Retry failed items.
// Its click (ActionRetry with the artifact and its revision) runs those items again
// through the pipeline, keeping the items that were written; what was written from
// the artifact goes stale (workflow.Pipeline.RetryFailed).

// retryItems runs the click on an artifact's Retry failed items: its failed items
// run again in a pipeline part enqueued with the turn. A click on an older card is
// told the Retry is no longer available.
func (t pipelineRun) retryItems(ctx context.Context, a conversation.ActionInput) error {
	id := a.Action.Artifact
	if t.def() == nil || t.m.Current(t.ws(), id, a.Action.Rev) != nil {
		t.ephemeral(ctx, render.Tr(t.lang, "retry.gone"))
		return errTold{&workflow.Refusal{Reason: workflow.NotCurrent, Artifact: id}}
	}
	t.m.Reopen(t.ws())
	t.state.Mode = conversation.ModeWorkflow
	rev, err := t.m.Pipeline().RetryFailed(t.ws(), id, t.user)
	if err != nil {
		return err
	}
	t.keep(rev)
	t.m.Pipeline().Resume(t.ws())
	t.events = append(t.events, cardEvent{kind: evProgress})
	t.continuePipeline()
	return nil
}
