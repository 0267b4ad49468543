package service

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// Why an artifact's message was replaced by a newer one (cardEvent.why): the old one
// is closed, its buttons gone, saying so.
const (
	supersededRevised     = "revised"     // a new text replaced the one under review
	supersededChosen      = "chosen"      // an option was chosen
	supersededRegenerated = "regenerated" // new options replaced these
	supersededRestarted   = "restarted"   // the artifact went back to its start
	supersededRewritten   = "rewritten"   // the pipeline wrote it again
)

// render shows what the turn changed (cards follow the state): each event in order
// (the run's first message, an artifact's new options or text, an approval), every
// message an artifact's new one replaced closed with what replaced it, and the stale
// list, shown once the artifact whose change made it is approved again, its rows
// updated as they are handled. ctx is the final writes' context.
func (t *wfTurn) render(ctx context.Context) error {
	for _, e := range t.events {
		switch e.kind {
		case evStarted:
			card := t.cards().started(t.ws())
			if t.startedInChannel() {
				// The thread's first message is the run's header: it becomes this card
				// rather than getting a second header under it.
				t.update(ctx, t.key.ThreadTS, card)
			} else if err := t.postCard(ctx, card, nil); err != nil {
				return err
			}
		case evInputs:
			t.renderInputs(ctx, e.by) // workflow_modal.go
		case evProgress:
			if t.ws().Pipeline != nil {
				t.showProgress(ctx, true)
			}
		case evApproved, evKept:
			a, _ := t.def().Artifact(e.id)
			st := t.ws().Artifacts[e.id]
			note := "✓ " + tr(t.lang, "approved_by", e.by)
			if e.kind == evKept {
				note = "✓ " + tr(t.lang, "superseded.kept", e.by)
			}
			if st.MessageTS != "" {
				t.update(ctx, st.MessageTS, t.cards().closed(a, st, note))
			}
			t.shown[e.id] = *st
		case evShow:
			if err := t.renderShow(ctx, e); err != nil {
				return err
			}
		}
	}
	t.events = nil
	t.renderMoved(ctx)
	return t.renderStale(ctx)
}

// renderMoved brings every artifact message that shows an earlier revision, and that
// no event of the turn replaced, in line with the state: an artifact that went stale,
// or back to pending, or that the pipeline writes again, loses its buttons and says
// why; one still awaiting people is drawn again with buttons for its current revision.
func (t *wfTurn) renderMoved(ctx context.Context) {
	if t.ws() == nil || t.def() == nil {
		return
	}
	for _, id := range t.def().Order() {
		st, old := t.ws().Artifacts[id], t.shown[id]
		if st == nil || st.MessageTS == "" || st.MessageTS != old.MessageTS || st.Rev == old.Rev {
			continue
		}
		a, _ := t.def().Artifact(id)
		var card conversation.Card
		switch st.Status {
		case workflow.StatusStale:
			card = t.cards().closed(a, &old, "⚠ "+tr(t.lang, "superseded.stale", t.cards().title(st.StaleBecause)))
		case workflow.StatusPending:
			card = t.cards().closed(a, &old, "↻ "+tr(t.lang, "superseded.withdrawn"))
		case workflow.StatusRunning:
			card = t.cards().closed(a, &old, "↻ "+tr(t.lang, "superseded.rewriting"))
		default:
			card = t.cards().live(a, st)
		}
		t.update(ctx, st.MessageTS, card)
		t.shown[id] = *st
	}
}

// renderShow posts artifact e.id as it is now and closes the message that showed it
// before.
func (t *wfTurn) renderShow(ctx context.Context, e cardEvent) error {
	a, _ := t.def().Artifact(e.id)
	st := t.ws().Artifacts[e.id]
	old, oldTS := t.shown[e.id], st.MessageTS
	if err := t.postCard(ctx, t.cards().live(a, st), &st.MessageTS); err != nil {
		return err
	}
	if oldTS != "" && oldTS != st.MessageTS {
		note := ""
		switch e.why {
		case supersededChosen:
			note = "✓ " + tr(t.lang, "chosen", e.label, e.by)
		case supersededRegenerated:
			note = "↻ " + tr(t.lang, "superseded.regenerated")
		case supersededRestarted:
			note = "↻ " + tr(t.lang, "superseded.restarted", e.by)
		case supersededRewritten:
			note = "↻ " + tr(t.lang, "superseded.rewriting")
		default:
			note = "✎ " + tr(t.lang, "superseded.revised", e.revision)
		}
		t.update(ctx, oldTS, t.cards().closed(a, &old, note))
	}
	t.shown[e.id] = *st
	return nil
}

// renderStale posts the stale list once it is shown, or updates it; a list whose rows
// are all handled is closed and forgotten.
func (t *wfTurn) renderStale(ctx context.Context) error {
	if t.ws() == nil {
		return nil
	}
	l := t.ws().Stale
	if l == nil {
		return nil
	}
	if l.Replaces != "" {
		t.update(ctx, l.Replaces, t.cards().staleReplaced(l))
		l.Replaces = ""
	}
	if !l.Shown {
		return nil
	}
	card := t.cards().stale(l, t.ws())
	if l.TS == "" {
		if err := t.postCard(ctx, card, &l.TS); err != nil {
			return err
		}
	} else {
		t.update(ctx, l.TS, card)
	}
	t.m.ForgetStaleList(t.ws())
	return nil
}

// postCard posts c in the thread and stores its ts in ts, when given. A post that
// Slack refused is logged and shows nothing; a lost lease ends the turn.
func (t *wfTurn) postCard(ctx context.Context, c conversation.Card, ts *string) error {
	posted, err := t.r.out.PostCard(ctx, c)
	if errors.Is(err, conversation.ErrLeaseLost) {
		return err
	}
	if err != nil {
		t.log.Error("card not posted", "error", err)
	}
	if ts != nil {
		*ts = posted
	}
	return nil
}

// startedInChannel reports whether the turn runs a start typed in a channel, whose
// turn began in the thread the channel command opened with a header message.
func (t *wfTurn) startedInChannel() bool {
	cmd := t.r.in.Command
	if t.r.in.Kind != conversation.KindCommand || cmd == nil || cmd.Origin != t.key.ChannelID || cmd.Source == conversation.SourceShortcut {
		return false
	}
	c, _ := parseCommand(cmd.Line)
	return c.name == conversation.CmdStart
}

// post posts c in the thread now and returns its ts ("" when posting failed; logged).
func (t *wfTurn) post(ctx context.Context, c conversation.Card) string {
	var ts string
	_ = t.postCard(ctx, c, &ts)
	return ts
}

// update replaces the message ts with c, when there is one; a failure is logged.
func (t *wfTurn) update(ctx context.Context, ts string, c conversation.Card) {
	if ts == "" || t.r.out.lost() {
		return
	}
	if err := t.s.cfg.Messenger.UpdateCard(ctx, t.key, ts, c); err != nil {
		t.log.Warn("card not updated", "ts", ts, "error", err)
	}
}

// cards builds the workflow's messages in one language for one thread.
type cards struct {
	lang string
	key  conversation.Key
	def  *workflow.Definition
	// format converts the model's Markdown to the card's markup.
	format func(string) string
	// profileDefined reports whether the deployment defines a model profile
	// (Config.ProfileDefined; nil: none).
	profileDefined func(string) bool
}

func (c cards) action(name conversation.ActionName, artifact string, rev int, arg string) conversation.Action {
	return conversation.Action{Name: name, Channel: c.key.ChannelID, ThreadTS: c.key.ThreadTS, Artifact: artifact, Rev: rev, Arg: arg}
}

// failed tells that a step failed (text) and offers Retry, which runs the step of
// input inputID again.
func (c cards) failed(text, inputID string) conversation.Card {
	return conversation.Card{Text: text, Blocks: []conversation.Block{
		{Kind: conversation.BlockSection, Text: text},
		{Kind: conversation.BlockActions, Buttons: []conversation.Button{{Label: tr(c.lang, "retry"), Style: "primary", Action: c.action(conversation.ActionRetry, "", 0, inputID)}}},
	}}
}

// started announces the workflow run ws, with its filled inputs.
func (c cards) started(ws *workflow.State) conversation.Card {
	user := ws.StartedBy
	var titles []string
	for _, a := range c.def.Artifacts {
		titles = append(titles, a.Title)
	}
	text := tr(c.lang, "started", c.def.Title, user, len(c.def.Artifacts), strings.Join(titles, " → "))
	blocks := []conversation.Block{{Kind: conversation.BlockHeader, Text: c.def.Title}}
	if c.def.Description != "" {
		blocks = append(blocks, conversation.Block{Kind: conversation.BlockContext, Text: c.def.Description})
	}
	blocks = append(blocks, conversation.Block{Kind: conversation.BlockSection, Text: text})
	if in := c.inputs(ws); in != "" {
		blocks = append(blocks, conversation.Block{Kind: conversation.BlockSection, Text: in})
	}
	return conversation.Card{Text: text, Blocks: blocks}
}

// inputs shows the run's filled inputs, one "*Label:* value" line each.
func (c cards) inputs(ws *workflow.State) string {
	var lines []string
	for _, in := range c.def.Inputs {
		if v := strings.TrimSpace(ws.Inputs[in.ID]); v != "" {
			lines = append(lines, "*"+strings.TrimSuffix(in.Name(), "?")+":* "+v)
		}
	}
	return strings.Join(lines, "\n")
}

// live shows artifact a as it is now, with the buttons of its current revision while
// it awaits people: its options, its text for review, or, for an auto artifact, what
// the pipeline wrote.
func (c cards) live(a *workflow.Artifact, st *workflow.ArtifactState) conversation.Card {
	switch {
	case a.Mode == workflow.ModeAuto:
		return c.pipelineArtifact(a, st)
	case st.Status == workflow.StatusOptionsGenerated:
		return c.options(a, st, "")
	}
	return c.artifact(a, st, "")
}

// closed shows artifact a as st (what a message showed) without buttons or menu,
// with note saying what became of it.
func (c cards) closed(a *workflow.Artifact, st *workflow.ArtifactState, note string) conversation.Card {
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

// title is artifact id's title.
func (c cards) title(id string) string {
	if a, ok := c.def.Artifact(id); ok {
		return a.Title
	}
	return id
}

// options shows a choice artifact's options with one button per option; done, when
// set, replaces the buttons with who chose what.
func (c cards) options(a *workflow.Artifact, st *workflow.ArtifactState, done string) conversation.Card {
	title := tr(c.lang, "options", a.Title)
	blocks := []conversation.Block{{Kind: conversation.BlockSection, Text: title}}
	if a.Description != "" {
		blocks = append(blocks, conversation.Block{Kind: conversation.BlockContext, Text: a.Description})
	}
	if p := c.passLine(a, st); p != "" {
		blocks = append(blocks, conversation.Block{Kind: conversation.BlockContext, Text: p})
	}
	var buttons []conversation.Button
	for _, o := range st.Options {
		head := "*" + o.Label + "*"
		if o.Title != "" {
			head += " · *" + o.Title + "*"
		}
		blocks = append(blocks, conversation.Block{Kind: conversation.BlockDivider}, conversation.Block{Kind: conversation.BlockSection, Text: head + "\n" + c.format(o.Text)})
		buttons = append(buttons, conversation.Button{Label: optionLabel(o), Action: c.action(conversation.ActionPick, a.ID, st.Rev, o.Label)})
	}
	blocks = append(blocks, conversation.Block{Kind: conversation.BlockDivider})
	if done != "" {
		blocks = append(blocks, conversation.Block{Kind: conversation.BlockContext, Text: done})
		return conversation.Card{Text: title, Blocks: blocks}
	}
	buttons = append(buttons, conversation.Button{Label: tr(c.lang, "regenerate"), Action: c.action(conversation.ActionRegenerate, a.ID, st.Rev, "")})
	blocks = append(blocks,
		conversation.Block{Kind: conversation.BlockActions, Buttons: buttons, Menu: c.menu(a, st)},
		conversation.Block{Kind: conversation.BlockContext, Text: tr(c.lang, "options.hint")})
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
func (c cards) artifact(a *workflow.Artifact, st *workflow.ArtifactState, done string) conversation.Card {
	blocks := []conversation.Block{{Kind: conversation.BlockHeader, Text: a.Title}, {Kind: conversation.BlockSection, Text: c.format(st.Text)}}
	if n := c.note(st.Note); n != "" {
		blocks = append(blocks, conversation.Block{Kind: conversation.BlockContext, Text: n})
	}
	if p := c.passLine(a, st); p != "" {
		blocks = append(blocks, conversation.Block{Kind: conversation.BlockContext, Text: p})
	}
	if len(st.Eval) > 0 {
		blocks = append(blocks, conversation.Block{Kind: conversation.BlockDivider}, conversation.Block{Kind: conversation.BlockContext, Text: c.judged(a, st)})
	}
	if done != "" {
		blocks = append(blocks, conversation.Block{Kind: conversation.BlockContext, Text: done})
		return conversation.Card{Text: a.Title, Blocks: blocks}
	}
	blocks = append(blocks,
		conversation.Block{Kind: conversation.BlockActions, Buttons: []conversation.Button{
			{Label: tr(c.lang, "approve"), Style: "primary", Action: c.action(conversation.ActionApprove, a.ID, st.Rev, "")},
			{Label: tr(c.lang, "request_changes"), Action: c.action(conversation.ActionRequestChanges, a.ID, st.Rev, ""),
				Modal: &conversation.Modal{Title: modalTitle(a.Title), Label: tr(c.lang, "changes.label"), Submit: tr(c.lang, "submit")}},
		}, Menu: c.menu(a, st)},
		conversation.Block{Kind: conversation.BlockContext, Text: tr(c.lang, "artifact.hint")})
	return conversation.Card{Text: a.Title, Blocks: blocks}
}

// evaluation sums up an evaluation on one line ("✅ 4 of 4 criteria met"), then each
// failing criterion with its reason on a line of its own.
func (c cards) evaluation(a *workflow.Artifact, eval []workflow.CriterionResult) string {
	met := 0
	var failed []string
	for _, r := range eval {
		if r.Pass {
			met++
			continue
		}
		line := "❌ *" + criterionTitle(c.lang, a, r.ID) + "*"
		if reason := strings.TrimSpace(r.Reason); reason != "" {
			line += ": " + shorten(strings.Join(strings.Fields(reason), " "), 300)
		}
		failed = append(failed, line)
	}
	mark := "✅"
	if len(failed) > 0 {
		mark = "⚠️"
	}
	return strings.Join(append([]string{mark + " " + tr(c.lang, "evaluation.met", met, len(eval))}, failed...), "\n")
}

// note is an artifact's revision note (ArtifactState.Note) as a card shows it, a
// line each, in italics, after "✏️ " and the word for it in the thread's language;
// "" without one. A Slack context block's text is at most 3000 characters.
func (c cards) note(note string) string {
	var lines []string
	for line := range strings.Lines(note) {
		if line = strings.Trim(strings.TrimSpace(line), "_*"); line != "" {
			lines = append(lines, "_"+shorten(line, 600)+"_")
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return "✏️ *" + tr(c.lang, "editor_note") + ":* " + shorten(strings.Join(lines, "\n"), 2800)
}

// menu is the overflow menu of an artifact's messages: restart and edit.
func (c cards) menu(a *workflow.Artifact, st *workflow.ArtifactState) []conversation.Button {
	items := []conversation.Button{{Label: tr(c.lang, "menu.restart"), Action: c.action(conversation.ActionRestart, a.ID, st.Rev, "")}}
	if st.Text != "" {
		items = append(items, conversation.Button{Label: tr(c.lang, "menu.edit"), Action: c.action(conversation.ActionEdit, a.ID, st.Rev, ""),
			Modal: &conversation.Modal{Title: modalTitle(a.Title), Label: tr(c.lang, "edit.label"), Submit: tr(c.lang, "submit")}})
	}
	return items
}

// maxModalTitle is the most characters of a modal's title (Slack's views.open: title
// text, 24 characters).
const maxModalTitle = 24

// modalTitle is title as a modal's title: whole when it fits, otherwise cut at the
// last word boundary that fits, with "…".
func modalTitle(title string) string {
	r := []rune(strings.Join(strings.Fields(title), " "))
	if len(r) <= maxModalTitle {
		return string(r)
	}
	cut := string(r[:maxModalTitle-1])
	if i := strings.LastIndexByte(cut, ' '); i > 0 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:.-–—") + "…"
}

// criterionTitle is criterion id's title on an evaluation card: its description without
// a closing full stop, or, for the check every written artifact gets, its name in lang.
func criterionTitle(lang string, a *workflow.Artifact, id string) string {
	for _, cr := range a.Criteria {
		if cr.ID == id {
			// A description is often a sentence; the card puts ":" and the reason
			// after it, so its closing full stop goes.
			return strings.TrimSuffix(strings.TrimSpace(cr.Description), ".")
		}
	}
	if id == conversation.CriterionPlaceholders {
		return tr(lang, "evaluation.no_slots")
	}
	return id
}

// stale is the stale list: the artifacts a change of l.Changed made stale, each with
// Keep and Regenerate with guidance while it is stale, or how it was handled; with
// more than one still stale, Keep all and Regenerate all.
func (c cards) stale(l *workflow.StaleList, ws *workflow.State) conversation.Card {
	ch, _ := c.def.Artifact(l.Changed)
	intro := tr(c.lang, "stale.intro", ch.Title)
	blocks := []conversation.Block{{Kind: conversation.BlockSection, Text: intro}}
	arts := ws.Artifacts
	m := workflow.Machine{Def: c.def}
	open := 0
	for _, row := range l.Rows {
		a, _ := c.def.Artifact(row.Artifact)
		line := "• *" + a.Title + "* (`" + a.ID + "`)"
		switch row.Done {
		case workflow.StaleKept:
			blocks = append(blocks, conversation.Block{Kind: conversation.BlockSection, Text: line + " — ✓ " + tr(c.lang, "stale.kept", row.By)})
			continue
		case workflow.StaleRegenerated:
			blocks = append(blocks, conversation.Block{Kind: conversation.BlockSection, Text: line + " — ↻ " + tr(c.lang, "stale.regenerated", row.By)})
			continue
		}
		if w := m.StaleWaitsFor(ws, row.Artifact); w != "" {
			blocks = append(blocks, conversation.Block{Kind: conversation.BlockSection, Text: line + " — ⏳ " + tr(c.lang, "stale.waits", c.title(w))})
			continue
		}
		open++
		st := arts[row.Artifact]
		blocks = append(blocks,
			conversation.Block{Kind: conversation.BlockSection, Text: line},
			conversation.Block{Kind: conversation.BlockActions, Buttons: []conversation.Button{
				{Label: tr(c.lang, "keep"), Action: c.action(conversation.ActionKeep, row.Artifact, st.Rev, "")},
				{Label: tr(c.lang, "regen_guidance"), Action: c.action(conversation.ActionRegenerateStale, row.Artifact, st.Rev, ""),
					Modal: &conversation.Modal{Title: modalTitle(a.Title), Label: tr(c.lang, "guidance.label"), Submit: tr(c.lang, "submit")}},
			}})
	}
	if open > 1 {
		blocks = append(blocks, conversation.Block{Kind: conversation.BlockActions, Buttons: []conversation.Button{
			{Label: tr(c.lang, "keep_all"), Action: c.action(conversation.ActionKeepAll, "", 0, l.Changed)},
			{Label: tr(c.lang, "regenerate_all"), Action: c.action(conversation.ActionRegenerateAll, "", 0, l.Changed),
				Modal: &conversation.Modal{Title: tr(c.lang, "guidance.title"), Label: tr(c.lang, "guidance.label"), Submit: tr(c.lang, "submit")}},
		}})
	}
	return conversation.Card{Text: intro, Blocks: blocks}
}

// staleReplaced closes the message of a stale list that l replaced.
func (c cards) staleReplaced(l *workflow.StaleList) conversation.Card {
	text := "↻ " + tr(c.lang, "stale.replaced", c.title(l.Changed))
	return conversation.Card{Text: text, Blocks: []conversation.Block{{Kind: conversation.BlockContext, Text: text}}}
}

// status lists every artifact with its status.
func (c cards) status(ws *workflow.State) conversation.Card {
	title := tr(c.lang, "status.title", c.def.Title)
	var lines []string
	for _, a := range c.def.Artifacts {
		st := ws.Artifacts[a.ID]
		line := fmt.Sprintf("• *%s* (`%s`): %s", a.Title, a.ID, statusWord(c.lang, st.Status))
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

// which asks which of a user's workflows a channel command means.
func which(lang string, refs []conversation.WorkflowRef, line string) conversation.Card {
	var buttons []conversation.Button
	for _, r := range refs {
		buttons = append(buttons, conversation.Button{
			Label:  r.Name + " · " + r.Key.ThreadTS,
			Action: conversation.Action{Name: conversation.ActionCommand, Channel: r.Key.ChannelID, ThreadTS: r.Key.ThreadTS, Arg: line},
		})
	}
	text := tr(lang, "which")
	return conversation.Card{Text: text, Blocks: []conversation.Block{{Kind: conversation.BlockSection, Text: text}, {Kind: conversation.BlockActions, Buttons: buttons}}}
}

// progress is a pipeline's progress message: its phase and tally, the elapsed time,
// and Stop, or, once stopped, who stopped it and Continue.
func (c cards) progress(ws *workflow.State, now time.Time) conversation.Card {
	p, title, tally, elapsed := ws.Pipeline, c.def.Title, c.tally(ws), ws.Pipeline.Elapsed(now).String()
	var text string
	var button conversation.Button
	if p.Stopped() {
		text = "⏹ " + tr(c.lang, "pipeline.stopped", title, p.StoppedBy, tally, elapsed)
		if p.Halted != "" {
			text = "⏹ " + tr(c.lang, "pipeline.halted", title, p.Halted, tally, elapsed)
		}
		button = conversation.Button{Label: tr(c.lang, "continue"), Style: "primary", Action: c.action(ActionContinue, "", 0, p.ID)}
		if p.Halted != "" {
			// It stopped itself after failing: the same Continue, named as every
			// failure's way forward is (README, "Failures and Retry").
			button.Label = tr(c.lang, "retry")
		}
	} else {
		text = "⏳ " + tr(c.lang, "pipeline.running", title, tally, elapsed)
		button = conversation.Button{Label: tr(c.lang, "stop"), Style: "danger", Action: c.action(conversation.ActionStop, "", 0, runStopPrefix+p.ID)}
	}
	if s := c.skippedPasses(ws); s != "" {
		text += "\n" + s
	}
	return conversation.Card{Text: text, Blocks: []conversation.Block{{Kind: conversation.BlockContext, Text: text}, {Kind: conversation.BlockActions, Buttons: []conversation.Button{button}}}}
}

// interrupted is a pipeline's progress message while the bot restarts: no button,
// since no turn runs to stop; the next part shows Stop again.
func (c cards) interrupted(ws *workflow.State, now time.Time) conversation.Card {
	text := "⏸ " + tr(c.lang, "pipeline.interrupted", c.def.Title, c.tally(ws), ws.Pipeline.Elapsed(now).String())
	return conversation.Card{Text: text, Blocks: []conversation.Block{{Kind: conversation.BlockContext, Text: text}}}
}

// pipelineArtifact shows an auto artifact the pipeline finished: its text when it is
// one item; for a foreach artifact, each item with its first line, and every failed
// item with its reason. Its menu restarts or edits it.
func (c cards) pipelineArtifact(a *workflow.Artifact, st *workflow.ArtifactState) conversation.Card {
	if a.Foreach == "" {
		card := c.artifact(a, st, "🤖 "+tr(c.lang, "pipeline.auto"))
		if len(st.Items) == 1 && st.Items[0].Status == workflow.ItemFailed {
			card.Blocks = append(card.Blocks, conversation.Block{Kind: conversation.BlockContext, Text: "⚠️ " + tr(c.lang, "pipeline.item_failed", st.Items[0].Attempts, st.Items[0].Reason)},
				conversation.Block{Kind: conversation.BlockActions, Buttons: c.retryItems(a, st)})
		}
		return card
	}
	failed := workflow.FailedItems(st.Items)
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
		if it.Status == workflow.ItemFailed {
			lines = append(lines, fmt.Sprintf("✗ *%s* — %s", it.Title, tr(c.lang, "pipeline.item_failed", it.Attempts, it.Reason)))
			continue
		}
		line := "✓ *" + it.Title + "*"
		if first := firstLine(workflow.ItemText(it)); first != "" {
			line += " — " + shorten(first, 140)
		}
		if it.Recovery != nil {
			note := tr(c.lang, "pipeline.recovered")
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
	if n := c.note(st.Note); n != "" {
		blocks = append(blocks, conversation.Block{Kind: conversation.BlockContext, Text: n})
	}
	if p := c.passLine(a, st); p != "" {
		blocks = append(blocks, conversation.Block{Kind: conversation.BlockContext, Text: p})
	}
	if len(st.Eval) > 0 {
		blocks = append(blocks, conversation.Block{Kind: conversation.BlockContext, Text: c.judged(a, st)})
	}
	blocks = append(blocks,
		conversation.Block{Kind: conversation.BlockActions, Buttons: append([]conversation.Button{{Label: tr(c.lang, "show_full_text"), Action: c.action(conversation.ActionFullText, a.ID, st.Rev, "")}}, c.retryItems(a, st)...), Menu: c.menu(a, st)},
		conversation.Block{Kind: conversation.BlockContext, Text: "🤖 " + tr(c.lang, "pipeline.auto") + " " + tr(c.lang, "pipeline.full_text")},
	)
	return conversation.Card{Text: a.Title + ": " + summary, Blocks: blocks}
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

// titles renders artifact ids as their titles, in bold.
func (c cards) titles(ids []string) string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		a, _ := c.def.Artifact(id)
		out = append(out, "*"+a.Title+"*")
	}
	return strings.Join(out, ", ")
}

// itemsProblem says why a foreach artifact's items could not be found in ws.
func (c cards) itemsProblem(ws *workflow.State, r *workflow.Refusal) string {
	src, _ := c.def.Artifact(r.Source)
	a, _ := c.def.Artifact(r.Artifact)
	if r.Reason == workflow.TooManyItems {
		n := len(workflow.Items(ws.Artifacts[r.Source].Text))
		return tr(c.lang, "too_many_items", src.Title, n, workflow.MaxItems, r.Source)
	}
	return tr(c.lang, "no_items", src.Title, a.Title, r.Source, r.Source)
}

// tally lists each artifact of ws's pipeline run with its items done / total and failures.
func (c cards) tally(ws *workflow.State) string {
	var parts []string
	for _, id := range ws.Pipeline.Artifacts {
		st := ws.Artifacts[id]
		a, _ := c.def.Artifact(id)
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
			s += " (" + tr(c.lang, "pipeline.failed", failed) + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " · ")
}
