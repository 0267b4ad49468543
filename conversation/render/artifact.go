package render

import (
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// options shows a choice artifact's options with one button per option; done, when
// set, replaces the buttons with who chose what.
func (c Cards) options(a *workflow.Artifact, st *workflow.ArtifactState, done string) conversation.Card {
	title := Tr(c.Lang, "options", a.Title)
	blocks := []conversation.Block{{Kind: conversation.BlockSection, Text: title}}
	if a.Description != "" {
		blocks = append(blocks, conversation.Block{Kind: conversation.BlockContext, Text: a.Description})
	}
	if p := c.grading().passLine(a, st); p != "" {
		blocks = append(blocks, conversation.Block{Kind: conversation.BlockContext, Text: p})
	}
	var buttons []conversation.Button
	for _, o := range st.Options {
		head := "*" + o.Label + "*"
		if o.Title != "" {
			head += " · *" + o.Title + "*"
		}
		blocks = append(blocks, conversation.Block{Kind: conversation.BlockDivider}, conversation.Block{Kind: conversation.BlockSection, Text: head + "\n" + c.Format(o.Text)})
		buttons = append(buttons, conversation.Button{Label: optionLabel(o), Action: c.action(conversation.ActionPick, a.ID, st.Rev, o.Label)})
	}
	blocks = append(blocks, conversation.Block{Kind: conversation.BlockDivider})
	if done != "" {
		blocks = append(blocks, conversation.Block{Kind: conversation.BlockContext, Text: done})
		return conversation.Card{Text: title, Blocks: blocks}
	}
	buttons = append(buttons, conversation.Button{Label: Tr(c.Lang, "regenerate"), Action: c.action(conversation.ActionRegenerate, a.ID, st.Rev, "")})
	blocks = append(blocks,
		conversation.Block{Kind: conversation.BlockActions, Buttons: buttons, Menu: c.menu(a, st)},
		conversation.Block{Kind: conversation.BlockContext, Text: Tr(c.Lang, "options.hint")})
	return conversation.Card{Text: title, Blocks: blocks}
}

func optionLabel(o workflow.Option) string {
	if o.Title == "" {
		return o.Label
	}
	return o.Label + ": " + o.Title
}

// artifact shows an artifact's text and evaluation, with Approve and Request changes
// while it awaits review; done, when set, replaces the buttons (for example "Approved
// by …").
func (c Cards) artifact(a *workflow.Artifact, st *workflow.ArtifactState, done string) conversation.Card {
	blocks := []conversation.Block{{Kind: conversation.BlockHeader, Text: a.Title}, {Kind: conversation.BlockSection, Text: c.Format(st.Text)}}
	if n := c.note(a, st); n != "" {
		blocks = append(blocks, conversation.Block{Kind: conversation.BlockContext, Text: n})
	}
	if p := c.grading().passLine(a, st); p != "" {
		blocks = append(blocks, conversation.Block{Kind: conversation.BlockContext, Text: p})
	}
	if len(st.Eval) > 0 {
		blocks = append(blocks, conversation.Block{Kind: conversation.BlockDivider}, conversation.Block{Kind: conversation.BlockContext, Text: c.grading().judged(a, st)})
	}
	if done != "" {
		blocks = append(blocks, conversation.Block{Kind: conversation.BlockContext, Text: done})
		return conversation.Card{Text: a.Title, Blocks: blocks}
	}
	blocks = append(blocks,
		conversation.Block{Kind: conversation.BlockActions, Buttons: []conversation.Button{
			{Label: Tr(c.Lang, "approve"), Style: "primary", Action: c.action(conversation.ActionApprove, a.ID, st.Rev, "")},
			{Label: Tr(c.Lang, "request_changes"), Action: c.action(conversation.ActionRequestChanges, a.ID, st.Rev, ""),
				Modal: &conversation.Modal{Title: modalTitle(Tr(c.Lang, "changes.title")), Label: Tr(c.Lang, "changes.label", a.Title), Submit: Tr(c.Lang, "submit")}},
		}, Menu: c.menu(a, st)},
		conversation.Block{Kind: conversation.BlockContext, Text: Tr(c.Lang, "artifact.hint")})
	return conversation.Card{Text: a.Title, Blocks: blocks}
}
