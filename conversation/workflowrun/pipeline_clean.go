package workflowrun

import (
	"context"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// fixPlaceholders gives each done item of finished auto artifact a whose text has a
// placeholder left ("[product]": it would fail the placeholders criterion) one
// revision by the editor agent, with that failure as its guidance, before the
// artifact is evaluated and shown (docs/workflows.md, "Workflows"). A revision that fails
// leaves the item as it was: the card then shows the failing criterion. It returns
// early when ctx ends; items fixed so far stay fixed.
func (t pipelineRun) fixPlaceholders(ctx context.Context, a *workflow.Artifact) {
	if a.Fetch != "" {
		return // fetched pages, not a model's text: nothing to fix
	}
	st := t.ws().Artifacts[a.ID]
	for i := range st.Items {
		it := st.Items[i]
		if it.Status != workflow.ItemDone {
			continue
		}
		ph := workflow.Placeholders(it.Text)
		if len(ph) == 0 {
			continue
		}
		r := t.itemRequest(a, st, i)
		r.Current, r.Instructions = it.Text, placeholderFix(ph)
		fixed, u, err := t.s.cfg.Agent.Revise(ctx, r)
		t.add(u)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			t.log.Warn("placeholder fix of a pipeline item failed; it keeps its text", "artifact", a.ID, "item", i, "error", err)
			continue
		}
		t.m.Pipeline().FixedItem(t.ws(), a.ID, i, fixed)
	}
}
