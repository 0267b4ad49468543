package render

import (
	"fmt"
	"strings"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// Progress is a pipeline's progress message: its phase and tally, the elapsed time,
// and Stop, or, once stopped, who stopped it and Continue.
func (c Cards) Progress(ws *workflow.State, now time.Time) conversation.Card {
	p, title, tally, elapsed := ws.Pipeline, c.Def.Title, c.Tally(ws), ws.Pipeline.Elapsed(now).String()
	var text string
	var button conversation.Button
	if p.Stopped() {
		text = "⏹ " + Tr(c.Lang, "pipeline.stopped", title, p.StoppedBy, tally, elapsed)
		if p.Halted != "" {
			text = "⏹ " + Tr(c.Lang, "pipeline.halted", title, p.Halted, tally, elapsed)
		}
		button = conversation.Button{Label: Tr(c.Lang, "continue"), Style: "primary", Action: c.action(conversation.ActionContinue, "", 0, p.ID)}
		if p.Halted != "" {
			// It stopped itself after failing: the same Continue, named as every
			// failure's way forward is (docs/workflows.md, "Failures and Retry").
			button.Label = Tr(c.Lang, "retry")
		}
	} else {
		text = "⏳ " + Tr(c.Lang, "pipeline.running", title, tally, elapsed)
		button = conversation.Button{Label: Tr(c.Lang, "stop"), Style: "danger", Action: c.action(conversation.ActionStop, "", 0, conversation.RunStopPrefix+p.ID)}
	}
	if s := c.skippedPasses(ws); s != "" {
		text += "\n" + s
	}
	if s := c.toolNotices(ws.Pipeline.Artifacts); s != "" {
		text += "\n" + s
	}
	return conversation.Card{Text: text, Blocks: []conversation.Block{{Kind: conversation.BlockContext, Text: text}, {Kind: conversation.BlockActions, Buttons: []conversation.Button{button}}}}
}

// Interrupted is a pipeline's progress message while the bot restarts: no button,
// since no turn runs to stop; the next part shows Stop again.
func (c Cards) Interrupted(ws *workflow.State, now time.Time) conversation.Card {
	text := "⏸ " + Tr(c.Lang, "pipeline.interrupted", c.Def.Title, c.Tally(ws), ws.Pipeline.Elapsed(now).String())
	return conversation.Card{Text: text, Blocks: []conversation.Block{{Kind: conversation.BlockContext, Text: text}}}
}

// pipelineArtifact shows an auto artifact the pipeline finished: its text when it is
// one item; for a foreach artifact, each item with its first line, and every failed
// item with its reason. Its menu restarts or edits it. A tool it names that could not
// run (toolNotices) is said last.
func (c Cards) pipelineArtifact(a *workflow.Artifact, st *workflow.ArtifactState) conversation.Card {
	card := c.pipelineArtifactCard(a, st)
	if n := c.toolNotices([]string{a.ID}); n != "" {
		card.Blocks = append(card.Blocks, conversation.Block{Kind: conversation.BlockContext, Text: n})
	}
	return card
}

// pipelineArtifactCard is pipelineArtifact's card before its tool notices.
func (c Cards) pipelineArtifactCard(a *workflow.Artifact, st *workflow.ArtifactState) conversation.Card {
	if a.Foreach == "" {
		card := c.artifact(a, st, "🤖 "+Tr(c.Lang, "pipeline.auto"))
		if len(st.Items) == 1 && st.Items[0].Status == workflow.ItemFailed {
			card.Blocks = append(card.Blocks, conversation.Block{Kind: conversation.BlockContext, Text: "⚠️ " + Tr(c.Lang, "pipeline.item_failed", st.Items[0].Attempts, st.Items[0].Reason)},
				conversation.Block{Kind: conversation.BlockActions, Buttons: c.retryItems(a, st)})
		}
		return card
	}
	failed := workflow.FailedItems(st.Items)
	summary := Tr(c.Lang, "pipeline.items", len(st.Items)-len(failed), len(st.Items))
	if len(failed) > 0 {
		var names []string
		for _, it := range failed {
			names = append(names, it.Title)
		}
		summary += " · " + Tr(c.Lang, "pipeline.failed", len(failed)) + ": " + strings.Join(names, ", ")
	}
	var lines []string
	for _, it := range st.Items {
		if it.Status == workflow.ItemFailed {
			lines = append(lines, fmt.Sprintf("✗ *%s* — %s", it.Title, Tr(c.Lang, "pipeline.item_failed", it.Attempts, it.Reason)))
			continue
		}
		line := "✓ *" + it.Title + "*"
		if first := firstLine(workflow.ItemText(it)); first != "" {
			line += " — " + shorten(first, 140)
		}
		if it.Recovery != nil {
			note := Tr(c.Lang, "pipeline.recovered")
			if r := strings.TrimSpace(it.Recovery.Rationale); r != "" {
				note += ": " + shorten(strings.Join(strings.Fields(r), " "), 160)
			}
			line += " _(" + note + ")_"
		}
		lines = append(lines, line)
	}
	blocks := []conversation.Block{
		{Kind: conversation.BlockHeader, Text: a.Title},
		{Kind: conversation.BlockSection, Text: summary + "\n" + strings.Join(lines, "\n")},
	}
	if n := c.note(a, st); n != "" {
		blocks = append(blocks, conversation.Block{Kind: conversation.BlockContext, Text: n})
	}
	if p := c.grading().passLine(a, st); p != "" {
		blocks = append(blocks, conversation.Block{Kind: conversation.BlockContext, Text: p})
	}
	if len(st.Eval) > 0 {
		blocks = append(blocks, conversation.Block{Kind: conversation.BlockContext, Text: c.grading().judged(a, st)})
	}
	blocks = append(blocks,
		conversation.Block{Kind: conversation.BlockActions, Buttons: append([]conversation.Button{{Label: Tr(c.Lang, "show_full_text"), Action: c.action(conversation.ActionFullText, a.ID, st.Rev, "")}}, c.retryItems(a, st)...), Menu: c.menu(a, st)},
		conversation.Block{Kind: conversation.BlockContext, Text: "🤖 " + Tr(c.Lang, "pipeline.auto") + " " + Tr(c.Lang, "pipeline.full_text")},
	)
	return conversation.Card{Text: a.Title + ": " + summary, Blocks: blocks}
}

// Tally lists each artifact of ws's pipeline run with its items done / total and failures.
func (c Cards) Tally(ws *workflow.State) string {
	var parts []string
	for _, id := range ws.Pipeline.Artifacts {
		st := ws.Artifacts[id]
		a, _ := c.Def.Artifact(id)
		done, failed := 0, 0
		for _, it := range st.Items {
			switch it.Status {
			case workflow.ItemDone:
				done++
			case workflow.ItemFailed:
				failed++
			}
		}
		title := a.Title
		if st.Status == workflow.StatusRunning {
			title = "*" + title + "*" // the phase under way
		}
		s := fmt.Sprintf("%s %d/%d", title, done+failed, len(st.Items))
		if failed > 0 {
			s += " (" + Tr(c.Lang, "pipeline.failed", failed) + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " · ")
}

// retryItems returns the Retry button of auto artifact a as st when some of its items
// failed, or nil.
func (c Cards) retryItems(a *workflow.Artifact, st *workflow.ArtifactState) []conversation.Button {
	if st.Status != workflow.StatusApproved || len(workflow.FailedItems(st.Items)) == 0 {
		return nil
	}
	return []conversation.Button{{Label: Tr(c.Lang, "retry.items"), Style: "primary", Action: c.action(conversation.ActionRetry, a.ID, st.Rev, "")}}
}

// skippedPasses are the lines of a pipeline's progress message that say which of
// its artifacts' enhancement passes are skipped (the deployment defines no such
// profile), one a line; "" when none is.
func (c Cards) skippedPasses(ws *workflow.State) string {
	var lines []string
	for _, id := range ws.Pipeline.Artifacts {
		a, ok := c.Def.Artifact(id)
		if ok && a.Enhance != nil && (c.ProfileDefined == nil || !c.ProfileDefined(a.Enhance.Model)) {
			lines = append(lines, "⏭ *"+a.Title+"*: "+Tr(c.Lang, "pass.enhance_skipped"))
		}
	}
	return strings.Join(lines, "\n")
}
