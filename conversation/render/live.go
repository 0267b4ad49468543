package render

import (
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// Live shows artifact a as it is now, with the buttons of its current revision while
// it awaits people: its options, its text for review, or, for an auto artifact, what
// the pipeline wrote.
func (c Cards) Live(a *workflow.Artifact, st *workflow.ArtifactState) conversation.Card {
	switch {
	case a.Mode == workflow.ModeAuto:
		return c.pipelineArtifact(a, st)
	case st.Status == workflow.StatusOptionsGenerated:
		return c.options(a, st, "")
	}
	return c.artifact(a, st, "")
}

// Closed shows artifact a as st (what a message showed) without buttons or menu,
// with note saying what became of it.
func (c Cards) Closed(a *workflow.Artifact, st *workflow.ArtifactState, note string) conversation.Card {
	switch {
	case a.Mode == workflow.ModeAuto:
		card := c.pipelineArtifact(a, st)
		blocks := card.Blocks[:0:0]
		for _, b := range card.Blocks {
			if b.Kind != conversation.BlockActions {
				blocks = append(blocks, b)
			}
		}
		card.Blocks = append(blocks, conversation.Block{Kind: conversation.BlockContext, Text: note})
		return card
	case st.Status == workflow.StatusOptionsGenerated || st.Status == workflow.StatusOptionSelected:
		return c.options(a, st, note)
	}
	return c.artifact(a, st, note)
}
