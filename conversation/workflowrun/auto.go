package workflowrun

import (
	"context"
	"errors"
	"fmt"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// startAuto starts auto artifacts ids (the scheduling rule's Plan.Start): each runs
// as items from now, and a pipeline is under way: outside a pipeline turn the
// progress message is shown and the pipeline input enqueued. An artifact that cannot
// be split into items is left pending and the thread is told why; the others start
// all the same.
func (t pipelineRun) startAuto(ctx context.Context, ids []string) {
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
func (t pipelineRun) continuePipeline() {
	p := t.m.Pipeline().NextPart(t.ws())
	t.enqueue = append(t.enqueue, conversation.Input{
		ID:   partID(t.key, p),
		Kind: conversation.KindPipeline, Key: t.key, CreatedAt: t.s.cfg.Now().UTC(),
	})
}

// partID is the input id of part p.Part of pipeline run p in thread key.
func partID(key conversation.Key, p *workflow.PipelineState) string {
	return fmt.Sprintf("pipeline:%s:%s:%d", key, p.ID, p.Part)
}
