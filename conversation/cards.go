package conversation

import (
	"fmt"
	"strings"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// cards builds the workflow's messages in one language for one thread.
type cards struct {
	lang string
	key  Key
	def  *workflow.Definition
	// format converts the model's Markdown to the card's markup.
	format func(string) string
}

func (c cards) action(name ActionName, artifact string, rev int, arg string) Action {
	return Action{Name: name, Channel: c.key.ChannelID, ThreadTS: c.key.ThreadTS, Artifact: artifact, Rev: rev, Arg: arg}
}

// started announces a workflow run.
func (c cards) started(user string) Card {
	var titles []string
	for _, a := range c.def.Artifacts {
		titles = append(titles, a.Title)
	}
	text := tr(c.lang, "started", c.def.Title, user, len(c.def.Artifacts), strings.Join(titles, " → "))
	blocks := []Block{{Kind: BlockHeader, Text: c.def.Title}}
	if c.def.Description != "" {
		blocks = append(blocks, Block{Kind: BlockContext, Text: c.def.Description})
	}
	blocks = append(blocks, Block{Kind: BlockSection, Text: text})
	return Card{Text: text, Blocks: blocks}
}

// options shows a choice artifact's options with one button per option; done, when
// set, replaces the buttons with who chose what.
func (c cards) options(a *workflow.Artifact, st *ArtifactState, done string) Card {
	title := tr(c.lang, "options", a.Title)
	blocks := []Block{{Kind: BlockSection, Text: title}}
	if a.Description != "" {
		blocks = append(blocks, Block{Kind: BlockContext, Text: a.Description})
	}
	var buttons []Button
	for _, o := range st.Options {
		head := "*" + o.Label + "*"
		if o.Title != "" {
			head += " · *" + o.Title + "*"
		}
		blocks = append(blocks, Block{Kind: BlockDivider}, Block{Kind: BlockSection, Text: head + "\n" + c.format(o.Text)})
		buttons = append(buttons, Button{Label: optionLabel(o), Action: c.action(ActionPick, a.ID, st.Rev, o.Label)})
	}
	blocks = append(blocks, Block{Kind: BlockDivider})
	if done != "" {
		blocks = append(blocks, Block{Kind: BlockContext, Text: done})
		return Card{Text: title, Blocks: blocks}
	}
	buttons = append(buttons, Button{Label: tr(c.lang, "regenerate"), Action: c.action(ActionRegenerate, a.ID, st.Rev, "")})
	blocks = append(blocks,
		Block{Kind: BlockActions, Buttons: buttons, Menu: c.menu(a, st)},
		Block{Kind: BlockContext, Text: tr(c.lang, "options.hint")})
	return Card{Text: title, Blocks: blocks}
}

func optionLabel(o Option) string {
	if o.Title == "" {
		return o.Label
	}
	return o.Label + ": " + o.Title
}

// artifact shows an artifact's text and evaluation, with Approve and Request changes
// while it awaits review; done, when set, replaces the buttons (for example "Approved
// by …").
func (c cards) artifact(a *workflow.Artifact, st *ArtifactState, done string) Card {
	blocks := []Block{{Kind: BlockHeader, Text: a.Title}, {Kind: BlockSection, Text: c.format(st.Text)}}
	if len(st.Eval) > 0 {
		var lines []string
		for _, r := range st.Eval {
			mark := "✅"
			if !r.Pass {
				mark = "❌"
			}
			lines = append(lines, fmt.Sprintf("%s *%s*: %s", mark, criterionTitle(a, r.ID), r.Reason))
		}
		blocks = append(blocks, Block{Kind: BlockDivider}, Block{Kind: BlockContext, Text: "*" + tr(c.lang, "evaluation") + "*\n" + strings.Join(lines, "\n")})
	}
	if done != "" {
		blocks = append(blocks, Block{Kind: BlockContext, Text: done})
		return Card{Text: a.Title, Blocks: blocks}
	}
	blocks = append(blocks,
		Block{Kind: BlockActions, Buttons: []Button{
			{Label: tr(c.lang, "approve"), Style: "primary", Action: c.action(ActionApprove, a.ID, st.Rev, "")},
			{Label: tr(c.lang, "request_changes"), Action: c.action(ActionRequestChanges, a.ID, st.Rev, ""),
				Modal: &Modal{Title: tr(c.lang, "changes.title"), Label: tr(c.lang, "changes.label"), Submit: tr(c.lang, "submit")}},
		}, Menu: c.menu(a, st)},
		Block{Kind: BlockContext, Text: tr(c.lang, "artifact.hint")})
	return Card{Text: a.Title, Blocks: blocks}
}

// menu is the overflow menu of an artifact's messages: restart and edit.
func (c cards) menu(a *workflow.Artifact, st *ArtifactState) []Button {
	items := []Button{{Label: tr(c.lang, "menu.restart"), Action: c.action(ActionRestart, a.ID, st.Rev, "")}}
	if st.Text != "" {
		items = append(items, Button{Label: tr(c.lang, "menu.edit"), Action: c.action(ActionEdit, a.ID, st.Rev, ""),
			Modal: &Modal{Title: tr(c.lang, "edit.title"), Label: tr(c.lang, "edit.label"), Submit: tr(c.lang, "submit")}})
	}
	return items
}

func criterionTitle(a *workflow.Artifact, id string) string {
	for _, cr := range a.Criteria {
		if cr.ID == id {
			return cr.Description
		}
	}
	return id
}

// stale lists the artifacts made stale by a change of changed, each with Keep and
// Regenerate with guidance.
func (c cards) stale(changed string, ids []string, arts map[string]*ArtifactState) Card {
	ch, _ := c.def.Artifact(changed)
	intro := tr(c.lang, "stale.intro", ch.Title)
	blocks := []Block{{Kind: BlockSection, Text: intro}}
	for _, id := range ids {
		a, _ := c.def.Artifact(id)
		st := arts[id]
		blocks = append(blocks,
			Block{Kind: BlockSection, Text: "• *" + a.Title + "* (`" + a.ID + "`)"},
			Block{Kind: BlockActions, Buttons: []Button{
				{Label: tr(c.lang, "keep"), Action: c.action(ActionKeep, id, st.Rev, "")},
				{Label: tr(c.lang, "regen_guidance"), Action: c.action(ActionRegenerateStale, id, st.Rev, ""),
					Modal: &Modal{Title: tr(c.lang, "guidance.title"), Label: tr(c.lang, "guidance.label"), Submit: tr(c.lang, "submit")}},
			}})
	}
	return Card{Text: intro, Blocks: blocks}
}

// status lists every artifact with its status.
func (c cards) status(ws *WorkflowState) Card {
	title := tr(c.lang, "status.title", c.def.Title)
	var lines []string
	for _, a := range c.def.Artifacts {
		st := ws.Artifacts[a.ID]
		line := fmt.Sprintf("• *%s* (`%s`): %s", a.Title, a.ID, statusWord(c.lang, st.Status))
		if st.Status == StatusRunning {
			line += fmt.Sprintf(" (%d/%d)", len(st.Items)-pendingItems(st.Items), len(st.Items))
		}
		lines = append(lines, line)
	}
	return Card{Text: title, Blocks: []Block{{Kind: BlockSection, Text: title + "\n" + strings.Join(lines, "\n")}}}
}

func statusWord(lang string, s ArtifactStatus) string {
	if w, ok := statusWords[lang][s]; ok {
		return w
	}
	return statusWords["en"][s]
}

// which asks which of a user's workflows a channel command means.
func which(lang string, refs []WorkflowRef, line string) Card {
	var buttons []Button
	for _, r := range refs {
		buttons = append(buttons, Button{
			Label:  r.Name + " · " + r.Key.ThreadTS,
			Action: Action{Name: ActionCommand, Channel: r.Key.ChannelID, ThreadTS: r.Key.ThreadTS, Arg: line},
		})
	}
	text := tr(lang, "which")
	return Card{Text: text, Blocks: []Block{{Kind: BlockSection, Text: text}, {Kind: BlockActions, Buttons: buttons}}}
}

// progress is a pipeline's progress message: its phase and tally, the elapsed time,
// and Stop, or, once stopped, who stopped it and Continue.
func (c cards) progress(title string, p *PipelineState, tally, elapsed string) Card {
	var text string
	var button Button
	if p.Stopped() {
		text = "⏹ " + tr(c.lang, "pipeline.stopped", title, p.StoppedBy, tally, elapsed)
		if p.Halted != "" {
			text = "⏹ " + tr(c.lang, "pipeline.halted", title, p.Halted, tally, elapsed)
		}
		button = Button{Label: tr(c.lang, "continue"), Style: "primary", Action: c.action(ActionContinue, "", 0, p.ID)}
	} else {
		text = "⏳ " + tr(c.lang, "pipeline.running", title, tally, elapsed)
		button = Button{Label: tr(c.lang, "stop"), Style: "danger", Action: c.action(ActionStop, "", 0, runStopPrefix+p.ID)}
	}
	return Card{Text: text, Blocks: []Block{{Kind: BlockContext, Text: text}, {Kind: BlockActions, Buttons: []Button{button}}}}
}

// pipelineArtifact shows an auto artifact the pipeline finished: its text when it is
// one item; for a foreach artifact, each item with its first line, and every failed
// item with its reason. Its menu restarts or edits it.
func (c cards) pipelineArtifact(a *workflow.Artifact, st *ArtifactState) Card {
	if a.Foreach == "" {
		card := c.artifact(a, st, "🤖 "+tr(c.lang, "pipeline.auto"))
		if len(st.Items) == 1 && st.Items[0].Status == ItemFailed {
			card.Blocks = append(card.Blocks, Block{Kind: BlockContext, Text: "⚠️ " + tr(c.lang, "pipeline.item_failed", st.Items[0].Attempts, st.Items[0].Reason)})
		}
		return card
	}
	failed := failedItems(st.Items)
	summary := tr(c.lang, "pipeline.items", len(st.Items)-len(failed), len(st.Items))
	if len(failed) > 0 {
		var names []string
		for _, it := range failed {
			names = append(names, it.Title)
		}
		summary += " · " + tr(c.lang, "pipeline.failed", len(failed)) + ": " + strings.Join(names, ", ")
	}
	var lines []string
	for _, it := range st.Items {
		if it.Status == ItemFailed {
			lines = append(lines, fmt.Sprintf("✗ *%s* — %s", it.Title, tr(c.lang, "pipeline.item_failed", it.Attempts, it.Reason)))
			continue
		}
		line := "✓ *" + it.Title + "*"
		if first := firstLine(itemText(it)); first != "" {
			line += " — " + clip(first, 140)
		}
		if it.Recovery != nil {
			note := tr(c.lang, "pipeline.recovered")
			if r := strings.TrimSpace(it.Recovery.Rationale); r != "" {
				note += ": " + clip(strings.Join(strings.Fields(r), " "), 160)
			}
			line += " _(" + note + ")_"
		}
		lines = append(lines, line)
	}
	blocks := []Block{
		{Kind: BlockHeader, Text: a.Title},
		{Kind: BlockSection, Text: summary + "\n" + strings.Join(lines, "\n")},
		{Kind: BlockActions, Menu: c.menu(a, st)},
		{Kind: BlockContext, Text: "🤖 " + tr(c.lang, "pipeline.auto") + " " + tr(c.lang, "pipeline.full_text")},
	}
	return Card{Text: a.Title + ": " + summary, Blocks: blocks}
}

// pendingItems counts the items not finished yet.
func pendingItems(items []ItemState) int {
	n := 0
	for _, it := range items {
		if it.Status == ItemPending {
			n++
		}
	}
	return n
}

// firstLine is the first non-empty line of s, without Markdown list or emphasis marks.
func firstLine(s string) string {
	for line := range strings.Lines(s) {
		if line = strings.Trim(strings.TrimSpace(line), "-*_#> "); line != "" {
			return line
		}
	}
	return ""
}
