package render

import (
	"fmt"
	"strings"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// Stale is the stale list: the artifacts a change of l.Changed made stale, each with
// Keep and Regenerate with guidance while it is stale, or how it was handled; with
// more than one still stale, Keep all and Regenerate all.
func (c Cards) Stale(l *workflow.StaleList, ws *workflow.State) conversation.Card {
	ch, _ := c.Def.Artifact(l.Changed)
	intro := Tr(c.Lang, "stale.intro", ch.Title)
	blocks := []conversation.Block{{Kind: conversation.BlockSection, Text: intro}}
	arts := ws.Artifacts
	stale := workflow.Staleness{Def: c.Def}
	open := 0
	for _, row := range l.Rows {
		a, _ := c.Def.Artifact(row.Artifact)
		line := "• *" + a.Title + "* (`" + a.ID + "`)"
		switch row.Done {
		case workflow.StaleKept:
			blocks = append(blocks, conversation.Block{Kind: conversation.BlockSection, Text: line + " — ✓ " + Tr(c.Lang, "stale.kept", row.By)})
			continue
		case workflow.StaleRegenerated:
			blocks = append(blocks, conversation.Block{Kind: conversation.BlockSection, Text: line + " — ↻ " + Tr(c.Lang, "stale.regenerated", row.By)})
			continue
		}
		if w := stale.WaitsFor(ws, row.Artifact); w != "" {
			blocks = append(blocks, conversation.Block{Kind: conversation.BlockSection, Text: line + " — ⏳ " + Tr(c.Lang, "stale.waits", c.Title(w))})
			continue
		}
		open++
		st := arts[row.Artifact]
		blocks = append(blocks,
			conversation.Block{Kind: conversation.BlockSection, Text: line},
			conversation.Block{Kind: conversation.BlockActions, Buttons: []conversation.Button{
				{Label: Tr(c.Lang, "keep"), Action: c.action(conversation.ActionKeep, row.Artifact, st.Rev, "")},
				{Label: Tr(c.Lang, "regen_guidance"), Action: c.action(conversation.ActionRegenerateStale, row.Artifact, st.Rev, ""),
					Modal: &conversation.Modal{Title: modalTitle(Tr(c.Lang, "guidance.title")), Label: Tr(c.Lang, "guidance.label_of", a.Title), Submit: Tr(c.Lang, "submit")}},
			}})
	}
	if open > 1 {
		blocks = append(blocks, conversation.Block{Kind: conversation.BlockActions, Buttons: []conversation.Button{
			{Label: Tr(c.Lang, "keep_all"), Action: c.action(conversation.ActionKeepAll, "", 0, l.Changed)},
			{Label: Tr(c.Lang, "regenerate_all"), Action: c.action(conversation.ActionRegenerateAll, "", 0, l.Changed),
				Modal: &conversation.Modal{Title: Tr(c.Lang, "guidance.title"), Label: Tr(c.Lang, "guidance.label"), Submit: Tr(c.Lang, "submit")}},
		}})
	}
	return conversation.Card{Text: intro, Blocks: blocks}
}

// StaleReplaced closes the message of a stale list that l replaced.
func (c Cards) StaleReplaced(l *workflow.StaleList) conversation.Card {
	return NoteCard("↻ " + Tr(c.Lang, "stale.replaced", c.Title(l.Changed)))
}

// Status lists every artifact with its status, after the run's subject and where
// it stands (w, Machine.Waiting: the step and who it waits for).
func (c Cards) Status(ws *workflow.State, w workflow.Waiting) conversation.Card {
	title := Tr(c.Lang, "status.title", c.Def.Title)
	if s := workflow.Subject(c.Def, ws); s != "" {
		title += " — " + s
	}
	title += "\n" + Waiting(c.Lang, c.Def, w)
	var lines []string
	for _, a := range c.Def.Artifacts {
		st := ws.Artifacts[a.ID]
		line := fmt.Sprintf("• *%s* (`%s`): %s", a.Title, a.ID, statusWord(c.Lang, st.Status))
		if st.Status == workflow.StatusRunning {
			line += fmt.Sprintf(" (%d/%d)", len(st.Items)-workflow.PendingItems(st.Items), len(st.Items))
		}
		lines = append(lines, line)
	}
	return conversation.Card{Text: title, Blocks: []conversation.Block{{Kind: conversation.BlockSection, Text: title + "\n" + strings.Join(lines, "\n")}}}
}

func statusWord(lang string, s workflow.ArtifactStatus) string {
	if w, ok := statusWords[lang][s]; ok {
		return w
	}
	return statusWords["en"][s]
}
