package workflowrun

import (
	"context"
	"strings"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// fullText posts artifact id's current text (a foreach artifact's items joined) to the
// person who clicked, split over messages when it is long.
func (t *wfTurn) fullText(ctx context.Context, id string) error {
	a, ok := t.def().Artifact(id)
	st := t.ws().Artifacts[id]
	if !ok || st == nil {
		return &workflow.Refusal{Reason: workflow.NotCurrent, Artifact: id}
	}
	text := st.Text
	if strings.TrimSpace(text) == "" && len(st.Items) > 0 {
		text = workflow.JoinItems(a, st.Items)
	}
	t.ephemeral(ctx, "*"+a.Title+"*\n\n"+t.s.cfg.Format(workflow.StripNotes(text)))
	return nil
}
