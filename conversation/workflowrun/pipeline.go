package workflowrun

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/history"
	"github.com/threadwright/threadwright/conversation/render"
	"github.com/threadwright/threadwright/conversation/turns"
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

// maxReason bounds a failure reason kept in the checkpoint and shown in the thread.
const maxReason = 300

// itemJob is one item to run: everything the worker needs, copied from the state.
type itemJob struct {
	artifact string
	index    int
	req      conversation.ArtifactRequest
	retries  int
	editor   *workflow.Editor
	// The item's earlier failed tries (checkpointed), which this run continues.
	tried    int
	failures []string
	recovery *workflow.Recovery
}

// itemResult is what a worker reports for one item: its end, or (step) a failed try
// or a recovery on the way, checkpointed so that a cut run does not try again what
// it already tried.
type itemResult struct {
	job      itemJob
	step     bool
	text     string
	reason   string // non-empty: every try failed
	attempts int
	failures []string
	recovery *workflow.Recovery
	usage    conversation.Usage
	// cut is true when the turn ended (stop, shutdown, timeout) before the item did:
	// nothing more is recorded for it.
	cut bool
	// batch holds the item a batch job's step wrote, item index → text
	// (pipeline_batch.go); nil for any other job.
	batch map[int]string
}

// startAuto starts auto artifacts ids (the scheduling rule's Plan.Start): each runs
// as items from now, and a pipeline is under way: outside a pipeline turn the
// progress message is shown and the pipeline input enqueued. An artifact that cannot
// be split into items is left pending and the thread is told why; the others start
// all the same.
func (t *wfTurn) startAuto(ctx context.Context, ids []string) {
	started := false
	for _, id := range ids {
		items, err := t.m.Pipeline().ItemsOf(t.ws(), id)
		if err == nil {
			err = t.m.Pipeline().Started(t.ws(), id, items)
		}
		var r *workflow.Refusal
		switch {
		case errors.As(err, &r) && (r.Reason == workflow.NoItems || r.Reason == workflow.TooManyItems):
			if t.reply == "" {
				t.reply = t.cards().ItemsProblem(t.ws(), r)
			}
			continue
		case err != nil:
			t.log.Error("auto artifact not started", "artifact", id, "error", err)
			continue
		}
		started = true
	}
	if !started || t.pipeline {
		return // a pipeline turn runs them itself
	}
	t.m.Pipeline().Resume(t.ws())
	t.events = append(t.events, cardEvent{kind: evProgress})
	t.continuePipeline()
}

// continuePipeline enqueues the next KindPipeline input with the turn's save.
func (t *wfTurn) continuePipeline() {
	p := t.m.Pipeline().NextPart(t.ws())
	t.enqueue = append(t.enqueue, conversation.Input{
		ID:   partID(t.key, p),
		Kind: conversation.KindPipeline, Key: t.key, CreatedAt: t.s.cfg.Now().UTC(),
	})
}

// runPipeline is the turn of a KindPipeline input: it runs the running artifacts'
// unfinished items until all are done, the pipeline is stopped, or the turn gives
// way (see the package comment above).
func (t *wfTurn) runPipeline(ctx context.Context) error {
	ws := t.ws()
	if ws == nil || ws.Pipeline == nil {
		return nil // a pipeline input left over from a run that ended
	}
	if t.r.In.ID != partID(t.key, ws.Pipeline) {
		return nil // superseded: a later part of the run was enqueued after this one
	}
	if ws.Status != workflow.RunRunning {
		t.endPipeline(ctx, "⏹ "+render.Tr(t.lang, "pipeline.cancelled"))
		return nil
	}
	if ws.Pipeline.Stopped() {
		return nil // waits for Continue
	}
	if t.r.In.Attempts > t.s.cfg.MaxAttempts {
		// Its turns keep failing (or the bot keeps dying in them): stop retrying.
		t.m.Pipeline().Halt(ws, render.Tr(t.lang, "pipeline.attempts", t.s.cfg.MaxAttempts))
		t.log.Error("pipeline halted after repeated failures", "attempts", t.r.In.Attempts)
		t.showProgress(ctx, true)
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
		t.showProgress(ctx, false)
	}
	for len(inFlight) > 0 { // after a failed step: let the workers end, keeping what they finished
		r := <-results
		if !r.step {
			delete(inFlight, itemKey{r.job.artifact, r.job.index})
		}
		t.add(r.usage)
		t.record(r, false)
	}
	if perr := t.pausePipeline(ctx); perr != nil {
		return perr // shutting down: the input stays pending and continues after the restart
	}
	return err
}

// itemKey names an item of an artifact.
type itemKey struct {
	artifact string
	index    int
}

// flight holds the items being written.
type flight map[itemKey]bool

// of counts the items of artifact id being written.
func (f flight) of(id string) int {
	n := 0
	for k := range f {
		if k.artifact == id {
			n++
		}
	}
	return n
}

// isStop reports whether a person stopped ctx.
func isStop(ctx context.Context) bool {
	_, ok := conversation.StoppedBy(ctx)
	return ok
}

// jobs returns the items to start now, in workflow order, within the pipeline's and
// each artifact's concurrency, given the items running.
func (t *wfTurn) jobs(inFlight flight) []itemJob {
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

// itemRequest is the agent request for item i of running artifact a. For a foreach
// artifact, a dependency that fans out over the same artifact is given as its own
// item i only (the research notes of this section, not of every section).
func (t *wfTurn) itemRequest(a *workflow.Artifact, st *workflow.ArtifactState, i int) conversation.ArtifactRequest {
	r := t.request(a.ID, st.Instructions)
	if a.Foreach == "" {
		return r
	}
	it := st.Items[i]
	r.Item = &conversation.Item{Index: i, Total: len(st.Items), Title: it.Title, Brief: it.Brief}
	for _, dep := range t.def().Dependencies(a.ID) {
		d, _ := t.def().Artifact(dep)
		ds := t.ws().Artifacts[dep]
		if d.Foreach == a.Foreach && len(ds.Items) == len(st.Items) && ds.Text == workflow.JoinItems(d, ds.Items) {
			r.Approved[dep] = workflow.ItemText(ds.Items[i])
		}
	}
	return r
}

// worker writes items on goroutines of their own. It holds only what a worker needs
// (the agent, the log, the thread's language), so it cannot touch the turn's state:
// everything an item needs is copied into its itemJob, and what it did comes back as
// itemResults that the turn records.
type worker struct {
	agent  conversation.WorkflowAgent
	log    *slog.Logger
	lang   string
	redact func(string) string // Config.Redact, never nil
	// explain says what a failed try's error came from (Service.explain).
	explain func(error) conversation.Failure
	// enh runs the enhancement passes (enhance.go; nil: none).
	enh *enhancer
	// fetcher reads the pages of a fetch artifact (Config.Fetcher; nil: none is read,
	// for the reason noFetch).
	fetcher conversation.SourceFetcher
	noFetch string
}

// run runs one item: up to 1 + retries tries, going on after the job's earlier tries,
// the recovery agent rewriting the instructions before the last one, each try written
// then passed through the editor when the artifact has one. Each failed try but the
// last, and each recovery, is sent on steps (to be checkpointed); the item's end is
// returned.
func (w worker) run(ctx context.Context, job itemJob, steps chan<- itemResult) itemResult {
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

// write writes one try of an item, then its editor and enhancement passes (finish).
func (w worker) write(ctx context.Context, job itemJob, instructions string) (string, conversation.Usage, error) {
	text, usage, err := w.agent.Write(ctx, job.withInstructions(instructions))
	if err != nil {
		return text, usage, err
	}
	out, u, err := w.finish(ctx, job, text)
	return out, usage.Add(u), err
}

// finish passes text, written for job, through the artifact's editor pass, when it
// has one, then its enhancement pass (enhance.go): what every written item
// goes through before it is recorded, alone or in a batch (editItem).
func (w worker) finish(ctx context.Context, job itemJob, text string) (string, conversation.Usage, error) {
	if job.editor == nil {
		return w.enhance(ctx, job, text, conversation.Usage{}, nil)
	}
	r := job.req
	r.Current, r.Instructions = text, r.Workflow.ExpandPrompt(job.editor.Prompt, r.Inputs)
	if job.editor.Model != "" {
		r.Profile = job.editor.Model
	}
	edited, u, err := w.agent.Revise(ctx, r)
	return w.enhance(ctx, job, edited, u, err)
}

func (j itemJob) withInstructions(s string) conversation.ArtifactRequest {
	r := j.req
	r.Instructions = s
	return r
}

// recoveredInstructions are the recovery agent's instructions with its queries.
func recoveredInstructions(r workflow.Recovery) string {
	s := r.Instructions
	if len(r.Queries) > 0 {
		s += "\n\nSearch for:\n- " + strings.Join(r.Queries, "\n- ")
	}
	return s
}

// failureReason is the text kept for a failed try, scrubbed by redact before it is
// clipped (a clipped secret would no longer be recognized): the model's own reason
// when it gave up, after the tool that failed on its way; an error's words for
// people; otherwise what failed (explain), or the error's text.
func (w worker) failureReason(err error) string {
	var tf *conversation.TaskFailure
	var um interface{ UserMessage() string }
	s := err.Error()
	switch {
	case errors.As(err, &tf):
		s = tf.Reason
		if len(tf.Tools) > 0 {
			s = render.Tr(w.lang, "failed.tool", tf.Tools[0]) + " " + s
		}
	case errors.As(err, &um):
		s = um.UserMessage()
	default:
		if f := w.explain(err); f.Cause != conversation.CauseUnknown {
			s = strings.TrimSuffix(render.Tr(w.lang, "failed."+string(f.Cause)), ".")
			if f.Tool != "" {
				s = strings.TrimSuffix(render.Tr(w.lang, "failed.tool", f.Tool), ".")
			}
			if f.Detail != "" {
				s += " (" + f.Detail + ")"
			}
			if f.Message != "" {
				s += ": " + f.Message
			}
		}
	}
	return history.Clip(strings.Join(strings.Fields(w.redact(s)), " "), maxReason)
}

// record stores a worker's result in the state (workflow.Pipeline.RecordItem): a step
// (a failed try, a recovery) or the item's end. A cut item counts as an interruption
// when the turn ran out of time (interrupted true).
func (t *wfTurn) record(r itemResult, interrupted bool) {
	if r.job.index == batchIndex {
		t.recordBatch(r, interrupted)
		return
	}
	t.m.Pipeline().RecordItem(t.ws(), r.job.artifact, r.job.index, workflow.ItemEnd{
		Step: r.step, Cut: r.cut, Interrupted: interrupted, Text: r.text, Reason: r.reason,
		Attempts: r.attempts, Failures: r.failures, Recovery: r.recovery,
		TimeoutReason: render.Tr(t.lang, "item.timeout"),
	})
}

// completeArtifacts approves every running artifact whose items have all finished
// (none in flight): its text is the items' results joined in order, evaluated against
// its criteria, posted, and kept as a revision. Then the auto artifacts waiting for
// it start; what people review comes after the run, in its last part.
func (t *wfTurn) completeArtifacts(ctx context.Context) error {
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
func (t *wfTurn) complete(ctx context.Context, id string) error {
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
	return t.renderShow(fctx, cardEvent{kind: evShow, id: id, why: supersededRewritten})
}

// pausePipeline ends a pipeline turn: the run has finished (no artifact running: the
// next part closes it), was stopped by a person, or gives way to its next part. Every
// case but the stop enqueues that part; a turn cut by shutdown returns its error
// instead, so its input stays pending.
func (t *wfTurn) pausePipeline(ctx context.Context) error {
	ws := t.ws()
	if !workflow.AnyRunning(ws) && !t.r.ShuttingDown() {
		t.continuePipeline() // the next part ends the run and goes on
		return nil
	}
	if by, ok := conversation.StoppedBy(ctx); ok {
		_ = t.m.Pipeline().Stop(ws, ws.Pipeline.ID, by.By)
		t.showProgress(context.WithoutCancel(ctx), true)
		return nil
	}
	if t.r.ShuttingDown() {
		// Shutting down: the card loses its Stop until the next part runs.
		fctx, cancel := t.r.Final(ctx)
		defer cancel()
		t.update(fctx, ws.Pipeline.ProgressTS, t.cards().Interrupted(ws, t.s.cfg.Now()))
		return t.r.ShutdownErr()
	}
	t.showProgress(context.WithoutCancel(ctx), true) // the counts while it gives way
	t.continuePipeline()
	return nil
}

// endPipeline closes the progress message (with note, or the run's totals) and
// forgets the run.
func (t *wfTurn) endPipeline(ctx context.Context, note string) {
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
	t.update(ctx, ws.Pipeline.ProgressTS, render.NoteCard(note))
	t.m.Pipeline().End(ws)
}

// showProgress posts or updates the pipeline's progress message: the phase (the
// artifacts running), items done / total, failures, elapsed time, and Stop (Continue
// once stopped). Updates come at most once per turns.StatusInterval unless force is set.
func (t *wfTurn) showProgress(ctx context.Context, force bool) {
	p := t.ws().Pipeline
	now := t.s.cfg.Now()
	if !force && p.ProgressTS != "" && now.Sub(t.progressAt) < turns.StatusInterval {
		return
	}
	t.progressAt = now
	c := t.cards().Progress(t.ws(), now)
	if p.ProgressTS == "" {
		p.ProgressTS = t.post(ctx, c)
		return
	}
	t.update(ctx, p.ProgressTS, c)
}

// checkpoint saves the turn so far without finishing its input: what the pipeline
// finished survives a crash. The turn's messages and usage go with it.
func (t *wfTurn) checkpoint(ctx context.Context) error {
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

// partID is the input id of part p.Part of pipeline run p in thread key.
func partID(key conversation.Key, p *workflow.PipelineState) string {
	return fmt.Sprintf("pipeline:%s:%s:%d", key, p.ID, p.Part)
}
