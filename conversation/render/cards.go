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
	// ToolAvailable reports whether a tool an artifact names can run in the
	// thread's channel (nil: every tool can); toolNotices says what runs without.
	ToolAvailable func(name string) bool
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

// Started announces the workflow run ws, with its filled inputs; a topic taken from
// an earlier message (State.TopicFrom) says so, and while the run holds it
// (State.TopicHeld) the card offers to keep it or change it.
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
		switch {
		case ws.TopicHeld:
			blocks = append(blocks, conversation.Block{Kind: conversation.BlockContext, Text: Tr(c.Lang, "topic.held", ws.TopicFrom)}, c.topicButtons(ws))
		case ws.TopicFrom != "":
			blocks = append(blocks, conversation.Block{Kind: conversation.BlockContext, Text: Tr(c.Lang, "topic.from", ws.TopicFrom)})
		}
	}
	if n := c.toolNotices(c.Def.Order()); n != "" {
		blocks = append(blocks, conversation.Block{Kind: conversation.BlockContext, Text: n})
	}
	return conversation.Card{Text: text, Blocks: blocks}
}

// topicButtons keep the topic ws holds, or open a modal to change it
// (State.TopicHeld), with the topic as it is.
func (c Cards) topicButtons(ws *workflow.State) conversation.Block {
	topic := ""
	if in := c.Def.TopicInput(); in != nil {
		topic = ws.Inputs[in.ID]
	}
	return conversation.Block{Kind: conversation.BlockActions, Buttons: []conversation.Button{
		{Label: Tr(c.Lang, "topic.keep"), Style: "primary", Action: c.action(conversation.ActionTopicKeep, "", 0, "")},
		{Label: Tr(c.Lang, "topic.change"), Action: c.action(conversation.ActionTopicChange, "", 0, ""), Modal: &conversation.Modal{
			Title: Tr(c.Lang, "topic.modal_title"), Label: Tr(c.Lang, "topic.modal_label"), Submit: Tr(c.Lang, "topic.modal_submit"), Initial: topic}},
	}}
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

// Title is artifact id's title.
func (c Cards) Title(id string) string {
	if a, ok := c.Def.Artifact(id); ok {
		return a.Title
	}
	return id
}

// note is an artifact's revision note (ArtifactState.Note) as a card shows it, a
// line each, in italics, after "✏️ " and the word for it in the thread's language;
// "" without one. After an automatic revision (PriorEval set), which nobody asked
// for, it is labelled as automatic, the editor's "Revised as asked:" is taken off
// its lines, and it first lists the criteria the revision now meets, as the
// evaluation judged them (autoFixed). A claim that a change asked for was made
// (workflow.ClaimRe) is checked where a check can judge it (workflow.ClaimFound):
// one the text does not bear out says the change was not found instead. A Slack
// context block's text is at most 3000 characters.
func (c Cards) note(a *workflow.Artifact, st *workflow.ArtifactState) string {
	auto := st.PriorEval != nil
	var lines []string
	if auto {
		if fixed := c.autoFixed(a, st); fixed != "" {
			lines = append(lines, "_"+shorten(fixed, 600)+"_")
		}
	}
	for line := range strings.Lines(st.Note) {
		line = strings.Trim(strings.TrimSpace(line), "_*")
		if auto {
			line = strings.TrimSpace(workflow.ClaimRe.ReplaceAllString(line, "$1"))
		} else if m := workflow.ClaimRe.FindStringSubmatch(line); m != nil {
			if judged, found := workflow.ClaimFound(m[1], st.Text); judged && !found {
				// The editor says it made the change; the text does not show it.
				line = Tr(c.Lang, "note.not_found", strings.TrimRight(strings.TrimSpace(m[1]), "."))
			}
		}
		if line != "" {
			lines = append(lines, "_"+shorten(line, 600)+"_")
		}
	}
	if len(lines) == 0 {
		return ""
	}
	label := Tr(c.Lang, "editor_note")
	if auto {
		label = Tr(c.Lang, "note.automatic")
	}
	return "✏️ *" + label + ":* " + shorten(strings.Join(lines, "\n"), 2800)
}

// autoFixed says which criteria st's automatic revision made pass, failing in
// PriorEval and passing in Eval ("now meets: Names the audience; Has a price"), in
// the card's language; "" when none did.
func (c Cards) autoFixed(a *workflow.Artifact, st *workflow.ArtifactState) string {
	before := map[string]bool{}
	for _, r := range st.PriorEval {
		before[r.ID] = r.Pass
	}
	var fixed []string
	for _, r := range withPlaceholders(st.Eval, st.PriorEval) {
		if pass, ok := before[r.ID]; ok && !pass && r.Pass {
			fixed = append(fixed, CriterionTitle(c.Lang, a, r.ID))
		}
	}
	if len(fixed) == 0 {
		return ""
	}
	return Tr(c.Lang, "note.now_meets", strings.Join(fixed, "; "))
}

// menu is the overflow menu of an artifact's messages: restart and edit.
func (c Cards) menu(a *workflow.Artifact, st *workflow.ArtifactState) []conversation.Button {
	items := []conversation.Button{{Label: Tr(c.Lang, "menu.restart"), Action: c.action(conversation.ActionRestart, a.ID, st.Rev, "")}}
	if st.Text != "" {
		items = append(items, conversation.Button{Label: Tr(c.Lang, "menu.edit"), Action: c.action(conversation.ActionEdit, a.ID, st.Rev, ""),
			Modal: &conversation.Modal{Title: modalTitle(Tr(c.Lang, "edit.title")), Label: Tr(c.Lang, "edit.label", a.Title), Submit: Tr(c.Lang, "submit")}})
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
