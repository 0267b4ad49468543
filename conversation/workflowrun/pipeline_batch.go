package workflowrun

import (
	"context"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// Batch writes (docs/workflows.md, "Pipelines"): the items of a research_strategy: batch
// artifact are written by one request (ArtifactRequest.Batch) whose text has one
// "## " section per item; workflow.SplitBatch matches the sections to the items by
// title, and each matched item gets its section (after the editor pass, as an item
// written alone would). The batch is tried once: when it fails, or misses items,
// those are written one by one with their retries. Each item it finished is
// checkpointed as its editor pass ends, and its end too (workflow.Machine.BatchEnded),
// so a restart never writes again what the batch finished, nor the ended batch.

// batchIndex is the index of a batch job (itemJob.index): it runs for the artifact,
// not one item, and takes one place of the pipeline's concurrency.
const batchIndex = -1

// batchJob returns the batch write of running artifact a, covering its pending
// items; false when none is pending or one of its items is being written.
func (t pipelineRun) batchJob(a *workflow.Artifact, st *workflow.ArtifactState, inFlight flight) (itemJob, bool) {
	if inFlight.of(a.ID) > 0 {
		return itemJob{}, false
	}
	r := t.request(a.ID, st.Instructions)
	var batch []conversation.Item
	for i, it := range st.Items {
		if it.Status == workflow.ItemPending {
			batch = append(batch, conversation.Item{Index: i, Total: len(st.Items), Title: it.Title, Brief: it.Brief})
		}
	}
	if len(batch) == 0 {
		return itemJob{}, false
	}
	r.Batch = batch
	return itemJob{artifact: a.ID, index: batchIndex, req: r, editor: a.Editor}, true
}

// runBatch writes a batch job's items in one request and passes each section it
// found through the editor, in the items' order. Each item edited is sent on steps
// at once (its batch holds it: item index → text), to be checkpointed as an item
// written alone is, so that a crash from then on neither writes the batch again nor
// edits that item again. The job's result holds no item: it ends the batch. A cut
// turn cuts the batch (the items sent so far stay finished).
func (w worker) runBatch(ctx context.Context, job itemJob, steps chan<- itemResult) itemResult {
	res := itemResult{job: job}
	text, u, err := w.agent.Write(ctx, job.req)
	res.usage = u
	switch {
	case ctx.Err() != nil:
		res.cut = true
		return res
	case err != nil:
		w.log.Warn("batch write failed; its items are written one by one", "artifact", job.artifact, "items", len(job.req.Batch), "reason", w.failureReason(err))
		return res
	}
	titles := make([]string, len(job.req.Batch))
	for k, it := range job.req.Batch {
		titles[k] = it.Title
	}
	sections := workflow.SplitBatch(text, titles)
	written := 0
	for k, it := range job.req.Batch {
		body, ok := sections[k]
		if !ok {
			continue
		}
		edited, u, err := w.editItem(ctx, job, it, body)
		res.usage = res.usage.Add(u)
		switch {
		case ctx.Err() != nil:
			res.cut = true
			return res
		case err != nil:
			w.log.Warn("editor pass of a batch item failed; it is written alone", "artifact", job.artifact, "item", it.Index, "reason", w.failureReason(err))
			continue
		}
		taint := conversation.TaintFrom(ctx)
		steps <- itemResult{job: job, step: true, batch: map[int]string{it.Index: edited}, usage: res.usage,
			tainted: job.req.Tainted || taint.Read(), refused: taint.Refused()}
		res.usage = conversation.Usage{}
		written++
	}
	if missed := len(job.req.Batch) - written; missed > 0 {
		w.log.Info("batch write missed items; they are written one by one", "artifact", job.artifact, "missed", missed, "items", len(job.req.Batch))
	}
	return res
}

// editItem passes item it's text through the editor and enhancement passes, as a
// single item's write does (worker.finish).
func (w worker) editItem(ctx context.Context, job itemJob, it conversation.Item, text string) (string, conversation.Usage, error) {
	job.req.Batch, job.req.Item = nil, &it
	return w.finish(ctx, job, text)
}

// recordBatch records a batch job's step (an item it wrote: done) or its end: the
// batch has ended (its other items are written alone from now) unless a stop or a
// shutdown cut it: then it runs again for the items still pending. A batch cut by the
// turn's time (interrupted) ends too, so that a batch too long for a turn does not
// run again forever.
func (t pipelineRun) recordBatch(r itemResult, interrupted bool) {
	for i, text := range r.batch {
		t.m.Pipeline().RecordItem(t.ws(), r.job.artifact, i, workflow.ItemEnd{Text: text, Attempts: 1, Tainted: r.tainted, Refused: r.refused})
	}
	if r.step {
		return
	}
	if !r.cut || interrupted {
		t.m.Pipeline().BatchEnded(t.ws(), r.job.artifact)
	}
}
