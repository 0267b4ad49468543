package render

import (
	"strings"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// Cards builds the workflow's messages in one language for one thread.
type Cards struct {
	Lang string
	Key  conversation.Key
	Def  *workflow.Definition
	// Format converts the model's Markdown to the card's markup.
	Format func(string) string
	// ProfileDefined reports whether the deployment defines a model profile
	// (Config.ProfileDefined; nil: none).
	ProfileDefined func(string) bool
}

func (c Cards) action(name conversation.ActionName, artifact string, rev int, arg string) conversation.Action {
	return conversation.Action{Name: name, Channel: c.Key.ChannelID, ThreadTS: c.Key.ThreadTS, Artifact: artifact, Rev: rev, Arg: arg}
}

// Failed tells that a step failed (text) and offers Retry, which runs the step of
// input inputID again.
func (c Cards) Failed(text, inputID string) conversation.Card {
	return conversation.Card{Text: text, Blocks: []conversation.Block{
		{Kind: conversation.BlockSection, Text: text},
		{Kind: conversation.BlockActions, Buttons: []conversation.Button{{Label: Tr(c.Lang, "retry"), Style: "primary", Action: c.action(conversation.ActionRetry, "", 0, inputID)}}},
	}}
}

// Started announces the workflow run ws, with its filled inputs.
func (c Cards) Started(ws *workflow.State) conversation.Card {
	user := ws.StartedBy
	var titles []string
	for _, a := range c.Def.Artifacts {
		titles = append(titles, a.Title)
	}
	text := Tr(c.Lang, "started", c.Def.Title, user, len(c.Def.Artifacts), strings.Join(titles, " → "))
	blocks := []conversation.Block{{Kind: conversation.BlockHeader, Text: c.Def.Title}}
	if c.Def.Description != "" {
		blocks = append(blocks, conversation.Block{Kind: conversation.BlockContext, Text: c.Def.Description})
	}
	blocks = append(blocks, conversation.Block{Kind: conversation.BlockSection, Text: text})
	if in := c.inputs(ws); in != "" {
		blocks = append(blocks, conversation.Block{Kind: conversation.BlockSection, Text: in})
	}
	return conversation.Card{Text: text, Blocks: blocks}
}

// inputs shows the run's filled inputs, one "*Label:* value" line each.
func (c Cards) inputs(ws *workflow.State) string {
	var lines []string
	for _, in := range c.Def.Inputs {
		if v := strings.TrimSpace(ws.Inputs[in.ID]); v != "" {
			lines = append(lines, "*"+strings.TrimSuffix(in.Name(), "?")+":* "+v)
		}
	}
	return strings.Join(lines, "\n")
}

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

// Title is artifact id's title.
func (c Cards) Title(id string) string {
	if a, ok := c.Def.Artifact(id); ok {
		return a.Title
	}
	return id
}

// options shows a choice artifact's options with one button per option; done, when
// set, replaces the buttons with who chose what.
func (c Cards) options(a *workflow.Artifact, st *workflow.ArtifactState, done string) conversation.Card {
	title := Tr(c.Lang, "options", a.Title)
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
			{Label: Tr(c.Lang, "approve"), Style: "primary", Action: c.action(conversation.ActionApprove, a.ID, st.Rev, "")},
			{Label: Tr(c.Lang, "request_changes"), Action: c.action(conversation.ActionRequestChanges, a.ID, st.Rev, ""),
				Modal: &conversation.Modal{Title: modalTitle(a.Title), Label: Tr(c.Lang, "changes.label"), Submit: Tr(c.Lang, "submit")}},
		}, Menu: c.menu(a, st)},
		conversation.Block{Kind: conversation.BlockContext, Text: Tr(c.Lang, "artifact.hint")})
	return conversation.Card{Text: a.Title, Blocks: blocks}
}

// note is an artifact's revision note (ArtifactState.Note) as a card shows it, a
// line each, in italics, after "✏️ " and the word for it in the thread's language;
// "" without one. A Slack context block's text is at most 3000 characters.
func (c Cards) note(note string) string {
	var lines []string
	for line := range strings.Lines(note) {
		if line = strings.Trim(strings.TrimSpace(line), "_*"); line != "" {
			lines = append(lines, "_"+shorten(line, 600)+"_")
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return "✏️ *" + Tr(c.Lang, "editor_note") + ":* " + shorten(strings.Join(lines, "\n"), 2800)
}

// menu is the overflow menu of an artifact's messages: restart and edit.
func (c Cards) menu(a *workflow.Artifact, st *workflow.ArtifactState) []conversation.Button {
	items := []conversation.Button{{Label: Tr(c.Lang, "menu.restart"), Action: c.action(conversation.ActionRestart, a.ID, st.Rev, "")}}
	if st.Text != "" {
		items = append(items, conversation.Button{Label: Tr(c.Lang, "menu.edit"), Action: c.action(conversation.ActionEdit, a.ID, st.Rev, ""),
			Modal: &conversation.Modal{Title: modalTitle(a.Title), Label: Tr(c.Lang, "edit.label"), Submit: Tr(c.Lang, "submit")}})
	}
	return items
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

// Titles renders artifact ids as their titles, in bold.
func (c Cards) Titles(ids []string) string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		a, _ := c.Def.Artifact(id)
		out = append(out, "*"+a.Title+"*")
	}
	return strings.Join(out, ", ")
}

// ItemsProblem says why a foreach artifact's items could not be found in ws.
func (c Cards) ItemsProblem(ws *workflow.State, r *workflow.Refusal) string {
	src, _ := c.Def.Artifact(r.Source)
	a, _ := c.Def.Artifact(r.Artifact)
	if r.Reason == workflow.TooManyItems {
		n := len(workflow.Items(ws.Artifacts[r.Source].Text))
		return Tr(c.Lang, "too_many_items", src.Title, n, workflow.MaxItems, r.Source)
	}
	return Tr(c.Lang, "no_items", src.Title, a.Title, r.Source, r.Source)
}

// NoteCard is a message that only says text, in a context block: what a closed
// message (a progress message, a card whose buttons went) says of what became of it.
func NoteCard(text string) conversation.Card {
	return conversation.Card{Text: text, Blocks: []conversation.Block{{Kind: conversation.BlockContext, Text: text}}}
}

// RunHeader is the first message of a thread that a channel command opens for a run
// of def, started by userID: the run's title, who started it and the workflow's name.
func RunHeader(def *workflow.Definition, userID string) conversation.Card {
	return conversation.Card{
		Text:   def.Title,
		Blocks: []conversation.Block{{Kind: conversation.BlockHeader, Text: def.Title}, {Kind: conversation.BlockContext, Text: "<@" + userID + "> · `" + def.Name + "`"}},
	}
}

// MenuCard is artifact a's menu (restart, edit) for the person who used the message
// shortcut on its message; only they see it.
func (c Cards) MenuCard(a *workflow.Artifact, st *workflow.ArtifactState) conversation.Card {
	return conversation.Card{Text: a.Title, Blocks: []conversation.Block{
		{Kind: conversation.BlockSection, Text: "*" + a.Title + "*"},
		{Kind: conversation.BlockActions, Buttons: c.menu(a, st)},
	}}
}

// MeaningArg is the Arg of the Approve button of the card that asks what a typed
// reply meant (meaning), which the click closes.
const MeaningArg = "meaning"

// Meaning asks what a typed reply to artifact a meant, with buttons that act on it:
// Approve (the artifact's own), Request this change and Just a question, the latter
// two carrying the reply (carried, already cut to what a button's value holds).
func (c Cards) Meaning(a *workflow.Artifact, st *workflow.ArtifactState, carried string) conversation.Card {
	text := Tr(c.Lang, "reply_meaning", a.Title)
	return conversation.Card{Text: text, Blocks: []conversation.Block{
		{Kind: conversation.BlockSection, Text: text},
		{Kind: conversation.BlockActions, Buttons: []conversation.Button{
			{Label: Tr(c.Lang, "approve"), Style: "primary", Action: c.action(conversation.ActionApprove, a.ID, st.Rev, MeaningArg)},
			{Label: Tr(c.Lang, "reply_change"), Action: c.action(conversation.ActionReplyChange, a.ID, st.Rev, carried)},
			{Label: Tr(c.Lang, "reply_question"), Action: c.action(conversation.ActionReplyQuestion, a.ID, st.Rev, carried)},
		}},
	}}
}

// AskInputs asks for the missing inputs: the first one in words (a reply in the
// thread fills it), all of them with the button that opens their modal.
func (c Cards) AskInputs(missing []workflow.Input) conversation.Card {
	text := Tr(c.Lang, "input.ask", missing[0].Name())
	m := InputsModal(c.Def, c.Lang, missing)
	return conversation.Card{Text: text, Blocks: []conversation.Block{
		{Kind: conversation.BlockSection, Text: text},
		{Kind: conversation.BlockActions, Buttons: []conversation.Button{{
			Label: Tr(c.Lang, "inputs.fill"), Style: "primary",
			Action: c.action(conversation.ActionInputs, "", 0, ""), Modal: &m,
		}}},
	}}
}
