package conversation

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// Pipelines (DESIGN.md, "Artifact workflows"; the workflow package documents foreach,
// retries, editor and model): auto artifacts are written without review, item by
// item, by KindPipeline inputs of the thread.
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

// runStopPrefix starts the Arg of a pipeline's Stop button: "run:" and its id.
const runStopPrefix = "run:"

// ActionContinue resumes a stopped pipeline (its progress message's Continue button;
// Arg is the run's id).
const ActionContinue ActionName = "continue"

// maxInterruptions is how many times an item may be cut short by the end of its turn
// before it fails (a model call that never returns must not loop forever).
const maxInterruptions = 2

// maxReason bounds a failure reason kept in the checkpoint and shown in the thread.
const maxReason = 300

// itemJob is one item to run: everything the worker needs, copied from the state.
type itemJob struct {
	artifact string
	index    int
	req      ArtifactRequest
	retries  int
	editor   *workflow.Editor
	// The item's earlier failed tries (checkpointed), which this run continues.
	tried    int
	failures []string
	recovery *Recovery
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
	recovery *Recovery
	usage    Usage
	// cut is true when the turn ended (stop, shutdown, timeout) before the item did:
	// nothing more is recorded for it.
	cut bool
}

// startAuto marks the auto artifacts that can run now as running, with their items,
// and makes sure a pipeline is under way: outside a pipeline turn it posts the
// progress message and enqueues the pipeline input. Artifacts that cannot be split
// into items are reported to the thread and left pending.
func (t *wfTurn) startAuto(ctx context.Context) error {
	ws := t.ws()
	var started []string
	var unsplit error // the first artifact that cannot be split: left pending, reported
	for _, id := range t.def.Order() {
		st := ws.Artifacts[id]
		a, _ := t.def.Artifact(id)
		if st.Status == StatusApproved || st.Status == StatusRunning {
			continue
		}
		if st.Status == StatusStale {
			continue // it waits for Keep or Regenerate; what does not depend on it need not
		}
		if a.Mode != workflow.ModeAuto {
			break // people first
		}
		if st.Status != StatusPending || !t.depsApproved(id) {
			continue
		}
		items, err := t.items(a)
		if err != nil {
			if unsplit == nil {
				unsplit = err
			}
			continue
		}
		st = t.touch(id)
		st.Status, st.Items = StatusRunning, items
		started = append(started, id)
	}
	if len(started) == 0 {
		return unsplit
	}
	now := t.s.cfg.Now().UTC()
	if ws.Pipeline == nil {
		ws.Pipeline = &PipelineState{ID: strconv.FormatInt(now.UnixNano(), 36), StartedAt: now}
	}
	for _, id := range started {
		if !slices.Contains(ws.Pipeline.Artifacts, id) {
			ws.Pipeline.Artifacts = append(ws.Pipeline.Artifacts, id)
		}
	}
	if t.pipeline {
		return unsplit // this turn runs them
	}
	ws.Pipeline.StoppedBy, ws.Pipeline.Halted = "", ""
	t.showProgress(ctx, true)
	t.continuePipeline()
	return unsplit
}

// rerun runs stale auto artifact a again through the pipeline, every item with
// guidance as its instructions (foreach: over its source's current items). When what
// it depends on is not approved yet, it waits for it, and the thread is told.
func (t *wfTurn) rerun(ctx context.Context, a *workflow.Artifact, guidance, why string) error {
	st := t.touch(a.ID)
	st.Status, st.Items, st.StaleBecause, st.Instructions = StatusPending, nil, "", guidance
	t.revise(a.ID, why)
	if err := t.startAuto(ctx); err != nil {
		return err
	}
	if st.Status == StatusPending {
		var waits []string
		for _, dep := range t.def.Dependencies(a.ID) {
			if t.ws().Artifacts[dep].Status != StatusApproved {
				d, _ := t.def.Artifact(dep)
				waits = append(waits, "*"+d.Title+"*")
			}
		}
		if len(waits) == 0 {
			// People first (startAuto): an earlier artifact waits for a person.
			for _, id := range t.def.Order() {
				if id == a.ID {
					break
				}
				d, _ := t.def.Artifact(id)
				if s := t.ws().Artifacts[id].Status; d.Mode != workflow.ModeAuto && s != StatusApproved && s != StatusStale {
					waits = append(waits, "*"+d.Title+"*")
					break
				}
			}
		}
		t.reply = tr(t.lang, "rerun_waits", a.Title, strings.Join(waits, ", "))
	}
	return nil
}

// depsApproved reports whether every dependency of id is approved.
func (t *wfTurn) depsApproved(id string) bool {
	for _, dep := range t.def.Dependencies(id) {
		if t.ws().Artifacts[dep].Status != StatusApproved {
			return false
		}
	}
	return true
}

// items returns the items of auto artifact a: one per item of its foreach artifact's
// text, or one for the whole artifact. Errors (errUsage): no items, or too many.
func (t *wfTurn) items(a *workflow.Artifact) ([]ItemState, error) {
	if a.Foreach == "" {
		return []ItemState{{Title: a.Title, Status: ItemPending}}, nil
	}
	src, _ := t.def.Artifact(a.Foreach)
	found := workflow.Items(t.ws().Artifacts[a.Foreach].Text)
	switch {
	case len(found) == 0:
		return nil, errUsage{tr(t.lang, "no_items", src.Title, a.Title, a.Foreach, a.Foreach)}
	case len(found) > workflow.MaxItems:
		return nil, errUsage{tr(t.lang, "too_many_items", src.Title, len(found), workflow.MaxItems, a.Foreach)}
	}
	out := make([]ItemState, len(found))
	for i, it := range found {
		out[i] = ItemState{Title: it.Title, Brief: it.Body, Status: ItemPending}
	}
	return out, nil
}

// continuePipeline enqueues the next KindPipeline input with the turn's save.
func (t *wfTurn) continuePipeline() {
	p := t.ws().Pipeline
	p.Part++
	t.enqueue = append(t.enqueue, Input{
		ID:   t.partID(),
		Kind: KindPipeline, Key: t.key, CreatedAt: t.s.cfg.Now().UTC(),
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
	if t.in.ID != t.partID() {
		return nil // superseded: a later part of the run was enqueued after this one
	}
	if ws.Status != WorkflowRunning {
		t.endPipeline(ctx, "⏹ "+tr(t.lang, "pipeline.cancelled"))
		return nil
	}
	if ws.Pipeline.Stopped() {
		return nil // waits for Continue
	}
	if t.in.Attempts > t.s.cfg.MaxAttempts {
		// Its turns keep failing (or the bot keeps dying in them): stop retrying.
		ws.Pipeline.Halted = tr(t.lang, "pipeline.attempts", t.s.cfg.MaxAttempts)
		t.log.Error("pipeline halted after repeated failures", "attempts", t.in.Attempts)
		t.showProgress(ctx, true)
		return nil
	}
	t.pipeline = true
	if err := t.startAuto(ctx); err != nil { // artifacts a restart sent back to pending
		var u errUsage
		if !errors.As(err, &u) || !t.anyRunning() {
			t.endPipeline(ctx, "")
			return err
		}
		// An artifact that cannot be split stays pending (reported when it was met);
		// the running ones go on.
	}
	if !t.anyRunning() {
		// The run is over: end it and produce what follows (a reviewed artifact, the
		// report) in this fresh turn, with its whole time and no Stop.
		t.endPipeline(ctx, "")
		t.pipeline = false
		return t.advance(ctx)
	}
	t.s.allowRunStop(t.key, runStopPrefix+ws.Pipeline.ID)
	budget := t.s.cfg.Now().Add(t.s.cfg.TurnTimeout / 2)
	results := make(chan itemResult)
	inFlight := flight{}
	var err error
	for {
		// Stopped, or out of time: nothing more is completed; the next part does it.
		if ctx.Err() == nil {
			if err = t.completeArtifacts(ctx); err != nil {
				break
			}
		}
		giveWay := t.s.waiting(t.key) || t.s.cfg.Now().After(budget)
		if ctx.Err() == nil && !giveWay {
			for _, job := range t.jobs(inFlight) {
				inFlight[itemKey{job.artifact, job.index}] = true
				go func() { results <- t.runItem(ctx, job, results) }()
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
		t.record(r, ctx.Err() != nil && t.s.ctx.Err() == nil && !isStop(ctx))
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
	var usage errUsage
	if errors.As(err, &usage) && !t.anyRunning() {
		t.endPipeline(ctx, "") // what it would start cannot run (no items): people act first
		return err
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
	_, ok := stoppedBy(ctx)
	return ok
}

// jobs returns the items to start now, in workflow order, within the pipeline's and
// each artifact's concurrency, given the items running.
func (t *wfTurn) jobs(inFlight flight) []itemJob {
	limit := t.s.cfg.PipelineConcurrency
	var out []itemJob
	for _, id := range t.def.Order() {
		st := t.ws().Artifacts[id]
		if st.Status != StatusRunning {
			continue
		}
		a, _ := t.def.Artifact(id)
		artLimit := limit
		if a.Concurrency > 0 {
			artLimit = min(a.Concurrency, limit)
		}
		started := 0
		for i := range st.Items {
			if len(inFlight)+len(out) >= limit || inFlight.of(id)+started >= artLimit {
				break
			}
			if st.Items[i].Status != ItemPending || inFlight[itemKey{id, i}] {
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
func (t *wfTurn) itemRequest(a *workflow.Artifact, st *ArtifactState, i int) ArtifactRequest {
	r := t.request(a.ID, st.Instructions)
	if a.Foreach == "" {
		return r
	}
	it := st.Items[i]
	r.Item = &Item{Index: i, Total: len(st.Items), Title: it.Title, Brief: it.Brief}
	for _, dep := range t.def.Dependencies(a.ID) {
		d, _ := t.def.Artifact(dep)
		ds := t.ws().Artifacts[dep]
		if d.Foreach == a.Foreach && len(ds.Items) == len(st.Items) && ds.Text == joinItems(d, ds.Items) {
			r.Approved[dep] = itemText(ds.Items[i])
		}
	}
	return r
}

// runItem runs one item: up to 1 + retries tries, going on after the job's earlier
// tries, the recovery agent rewriting the instructions before the last one, each try
// written then passed through the editor when the artifact has one. Each failed try
// but the last, and each recovery, is sent on steps (to be checkpointed); the item's
// end is returned. It runs on its own goroutine and touches no state.
func (t *wfTurn) runItem(ctx context.Context, job itemJob, steps chan<- itemResult) itemResult {
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
		res.usage = Usage{}
	}
	for try := job.tried + 1; try <= tries; try++ {
		if try > 1 && try == tries && res.recovery == nil {
			rec, u, err := t.s.cfg.Agent.Recover(ctx, job.withInstructions(instructions), res.failures)
			res.usage = res.usage.Add(u)
			switch {
			case ctx.Err() != nil:
				res.cut = true
				return res
			case err != nil:
				t.log.Warn("recovery agent failed; last try with the old instructions", "artifact", job.artifact, "item", job.index, "error", err)
			default:
				res.recovery = &rec
				instructions = recoveredInstructions(rec)
				step()
			}
		}
		text, u, err := t.writeItem(ctx, job, instructions)
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
		reason := failureReason(err)
		t.log.Info("item failed", "artifact", job.artifact, "item", job.index, "try", try, "tries", tries, "reason", reason)
		res.failures = append(slices.Clip(res.failures), reason)
		if try < tries {
			step()
		}
	}
	if len(res.failures) == 0 { // every try was used before a cut: fail as the last one did
		res.failures = []string{tr(t.lang, "item.timeout")}
	}
	res.reason = res.failures[len(res.failures)-1]
	return res
}

// writeItem writes one try of an item and, when the artifact has an editor pass,
// edits it.
func (t *wfTurn) writeItem(ctx context.Context, job itemJob, instructions string) (string, Usage, error) {
	r := job.withInstructions(instructions)
	text, usage, err := t.s.cfg.Agent.Write(ctx, r)
	if err != nil || job.editor == nil {
		return text, usage, err
	}
	r.Current, r.Instructions = text, job.editor.Prompt
	if job.editor.Model != "" {
		r.Profile = job.editor.Model
	}
	edited, u, err := t.s.cfg.Agent.Revise(ctx, r)
	return edited, usage.Add(u), err
}

func (j itemJob) withInstructions(s string) ArtifactRequest {
	r := j.req
	r.Instructions = s
	return r
}

// recoveredInstructions are the recovery agent's instructions with its queries.
func recoveredInstructions(r Recovery) string {
	s := r.Instructions
	if len(r.Queries) > 0 {
		s += "\n\nSearch for:\n- " + strings.Join(r.Queries, "\n- ")
	}
	return s
}

// failureReason is the text kept for a failed try.
func failureReason(err error) string {
	var tf *TaskFailure
	var um interface{ UserMessage() string }
	s := err.Error()
	switch {
	case errors.As(err, &tf):
		s = tf.Reason
	case errors.As(err, &um):
		s = um.UserMessage()
	}
	return clip(strings.Join(strings.Fields(s), " "), maxReason)
}

// record stores a worker's result in the state: a step (a failed try, a recovery) or
// the item's end. A cut item is recorded only as an interruption, when the turn ran out
// of time (interrupted true).
func (t *wfTurn) record(r itemResult, interrupted bool) {
	st := t.ws().Artifacts[r.job.artifact]
	if st.Status != StatusRunning || r.job.index >= len(st.Items) {
		return
	}
	it := &st.Items[r.job.index]
	switch {
	case r.cut && interrupted:
		it.Interrupted++
		if it.Interrupted >= maxInterruptions {
			it.Status, it.Reason = ItemFailed, tr(t.lang, "item.timeout")
		}
	case r.cut:
	case r.step:
		it.Attempts, it.Failures, it.Recovery = r.attempts, slices.Clone(r.failures), r.recovery
	case r.reason != "":
		it.Status, it.Reason, it.Attempts, it.Failures, it.Recovery = ItemFailed, r.reason, r.attempts, slices.Clone(r.failures), r.recovery
	default:
		it.Status, it.Text, it.Attempts, it.Recovery = ItemDone, r.text, r.attempts, r.recovery
	}
}

// completeArtifacts approves every running artifact whose items have all finished
// (none in flight): its text is the items' results joined in order, evaluated against
// its criteria, posted, and kept as a revision. Then the auto artifacts waiting for
// it start (startAuto); what people review comes after the run, in its last part.
func (t *wfTurn) completeArtifacts(ctx context.Context) error {
	for {
		done := ""
		for _, id := range t.def.Order() {
			st := t.ws().Artifacts[id]
			if st.Status == StatusRunning && finished(st.Items) { // an item in flight is pending
				done = id
				break
			}
		}
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
		if err := t.startAuto(ctx); err != nil { // the auto artifacts that waited for it
			return err
		}
		if err := t.checkpoint(ctx); err != nil {
			return err
		}
	}
}

func finished(items []ItemState) bool { return pendingItems(items) == 0 }

// complete joins artifact id's items, evaluates and approves it, and posts it.
func (t *wfTurn) complete(ctx context.Context, id string) error {
	a, _ := t.def.Artifact(id)
	st := t.ws().Artifacts[id]
	text := joinItems(a, st.Items)
	var eval []CriterionResult
	if len(a.Criteria) > 0 {
		e, u, err := t.s.cfg.Agent.Evaluate(ctx, t.request(id, ""), text)
		t.add(u)
		if ctx.Err() != nil {
			return nil // stopped or out of time: it stays running, the next part completes it
		}
		if err != nil {
			t.log.Warn("evaluation of a pipeline artifact failed; approved without it", "artifact", id, "error", err)
		}
		eval = e
	}
	st = t.touch(id)
	st.Status, st.Text, st.Eval, st.StaleBecause = StatusApproved, text, eval, ""
	failed := failedItems(st.Items)
	why := "written by the pipeline"
	if len(failed) > 0 {
		why += fmt.Sprintf(" (%d of %d items failed)", len(failed), len(st.Items))
	}
	t.revise(id, why)
	st.MessageTS = t.post(ctx, t.cards().pipelineArtifact(a, st))
	return nil
}

// joinItems is the text of an auto artifact from its items: a foreach artifact's
// items each under a "## title" heading, in order; a failed item says so.
func joinItems(a *workflow.Artifact, items []ItemState) string {
	if a.Foreach == "" && len(items) == 1 {
		return itemText(items[0])
	}
	var b strings.Builder
	for i, it := range items {
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("## " + it.Title + "\n\n" + itemText(it))
	}
	return b.String()
}

// itemText is an item's result, without a heading the model repeated; for a failed
// item, a note with the reason.
func itemText(it ItemState) string {
	if it.Status == ItemFailed {
		return "_No result: " + it.Reason + "_"
	}
	text := strings.TrimSpace(it.Text)
	if first, rest, ok := strings.Cut(text, "\n"); ok && strings.HasPrefix(first, "#") && strings.EqualFold(strings.TrimSpace(strings.TrimLeft(first, "#")), it.Title) {
		text = strings.TrimSpace(rest)
	}
	return text
}

func failedItems(items []ItemState) []ItemState {
	var out []ItemState
	for _, it := range items {
		if it.Status == ItemFailed {
			out = append(out, it)
		}
	}
	return out
}

// pausePipeline ends a pipeline turn: the run has finished (no artifact running: the
// next part closes it), was stopped by a person, or gives way to its next part. Every
// case but the stop enqueues that part; a turn cut by shutdown returns its error
// instead, so its input stays pending.
func (t *wfTurn) pausePipeline(ctx context.Context) error {
	ws := t.ws()
	if !t.anyRunning() && t.s.ctx.Err() == nil {
		t.continuePipeline() // the next part ends the run and goes on
		return nil
	}
	if by, ok := stoppedBy(ctx); ok {
		ws.Pipeline.StoppedBy = by.By
		t.showProgress(context.WithoutCancel(ctx), true)
		return nil
	}
	if t.s.ctx.Err() != nil {
		return t.s.ctx.Err()
	}
	t.showProgress(context.WithoutCancel(ctx), true) // the counts while it gives way
	t.continuePipeline()
	return nil
}

func (t *wfTurn) anyRunning() bool {
	for _, st := range t.ws().Artifacts {
		if st.Status == StatusRunning {
			return true
		}
	}
	return false
}

// endPipeline closes the progress message (with note, or the run's totals) and
// forgets the run.
func (t *wfTurn) endPipeline(ctx context.Context, note string) {
	ws := t.ws()
	if ws.Pipeline == nil {
		return
	}
	for _, id := range ws.Pipeline.Artifacts {
		if note == "" && ws.Artifacts[id].Status != StatusApproved {
			// A person's change sent it back (its dependency is no longer approved).
			note = "⏹ " + tr(t.lang, "pipeline.ended", t.def.Title) + " " + t.tally()
		}
	}
	if note == "" {
		note = "✓ " + tr(t.lang, "pipeline.done", t.def.Title, t.elapsed()) + " " + t.tally()
	}
	ctx = context.WithoutCancel(ctx)
	t.update(ctx, ws.Pipeline.ProgressTS, Card{Text: note, Blocks: []Block{{Kind: BlockContext, Text: note}}})
	ws.Pipeline = nil
}

// elapsed is the run's time so far, in whole seconds.
func (t *wfTurn) elapsed() string {
	return t.s.cfg.Now().Sub(t.ws().Pipeline.StartedAt).Round(time.Second).String()
}

// tally lists each artifact of the run with its items done / total and failures.
func (t *wfTurn) tally() string {
	var parts []string
	for _, id := range t.ws().Pipeline.Artifacts {
		st := t.ws().Artifacts[id]
		a, _ := t.def.Artifact(id)
		done, failed := 0, 0
		for _, it := range st.Items {
			switch it.Status {
			case ItemDone:
				done++
			case ItemFailed:
				failed++
			}
		}
		title := a.Title
		if st.Status == StatusRunning {
			title = "*" + title + "*" // the phase under way
		}
		s := fmt.Sprintf("%s %d/%d", title, done+failed, len(st.Items))
		if failed > 0 {
			s += " (" + tr(t.lang, "pipeline.failed", failed) + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " · ")
}

// showProgress posts or updates the pipeline's progress message: the phase (the
// artifacts running), items done / total, failures, elapsed time, and Stop (Continue
// once stopped). Updates come at most once per statusInterval unless force is set.
func (t *wfTurn) showProgress(ctx context.Context, force bool) {
	p := t.ws().Pipeline
	now := t.s.cfg.Now()
	if !force && p.ProgressTS != "" && now.Sub(t.progressAt) < statusInterval {
		return
	}
	t.progressAt = now
	c := t.cards().progress(t.def.Title, p, t.tally(), t.elapsed())
	if p.ProgressTS == "" {
		p.ProgressTS = t.post(ctx, c)
		return
	}
	t.update(ctx, p.ProgressTS, c)
}

// checkpoint saves the turn so far without finishing its input: what the pipeline
// finished survives a crash. The turn's messages and usage go with it.
func (t *wfTurn) checkpoint(ctx context.Context) error {
	ctx, cancel := t.s.final(ctx)
	defer cancel()
	st := t.state
	st.PromptTokens += t.usage.PromptTokens
	st.CompletionTokens += t.usage.CompletionTokens
	saved, err := t.s.storeSave(ctx, t.r, Turn{Key: t.key, Version: t.conv.Version, State: st, Append: t.appended})
	if err != nil {
		return fmt.Errorf("checkpoint pipeline: %w", err)
	}
	t.state.PromptTokens, t.state.CompletionTokens = st.PromptTokens, st.CompletionTokens
	t.usage, t.appended = Usage{}, nil
	t.conv.Version = saved.Version
	return nil
}

// stopRun stops a pipeline that is between turns (its Stop clicked while no turn of
// it ran): its unfinished items wait for Continue.
func (t *wfTurn) stopRun(ctx context.Context, id string) {
	p := t.ws().Pipeline
	switch {
	case p == nil || p.ID != id:
		t.ephemeral(ctx, tr(t.lang, "not_current"))
		return
	case p.Stopped():
		return // stopped already (in its turn, on another replica)
	}
	p.StoppedBy = t.user
	t.showProgress(ctx, true)
}

// continueRun resumes a stopped pipeline.
func (t *wfTurn) continueRun(ctx context.Context, id string) {
	p := t.ws().Pipeline
	if p == nil || p.ID != id || !p.Stopped() {
		t.ephemeral(ctx, tr(t.lang, "not_current"))
		return
	}
	p.StoppedBy, p.Halted = "", ""
	t.showProgress(ctx, true)
	t.continuePipeline()
}

func (t *wfTurn) partID() string {
	p := t.ws().Pipeline
	return fmt.Sprintf("pipeline:%s:%s:%d", t.key, p.ID, p.Part)
}
