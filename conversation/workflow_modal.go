package conversation

import (
	"context"
	"strconv"
	"strings"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// The inputs a workflow still lacks once it started (README.md, "Workflows"): the
// start text and the thread's earlier messages fill what they can; for the rest the
// thread gets a message that asks for the first one (a reply there fills it) with a
// "Fill in the details" button, which opens a modal with one input per missing
// input. A slash command's trigger_id opens that modal at once (channelCommand). The
// modal's submission (ActionInputs) stores the values and the run goes on.

// ActionInputs is the submission of the modal that asks for a workflow's missing
// inputs (Modal.Fields); the values are ActionInput.Values.
const ActionInputs ActionName = "inputs"

// Field is one input of a modal with several (Modal.Fields): a workflow input.
type Field struct {
	// ID is the workflow input's id (workflow.Input.ID); Label what the input shows.
	ID    string
	Label string
	// Required fields must not be empty; Number fields hold a number ("1500", "2.5").
	Required bool
	Number   bool
}

// ModalOpener is a Messenger that opens a modal (Slack's views.open) for the
// trigger_id of a slash command or a click, which Slack accepts for 3 seconds. The
// modal's submission carries a (signed, as the Messenger's buttons are).
type ModalOpener interface {
	OpenModal(ctx context.Context, triggerID string, a Action, m Modal) error
}

// FieldError returns what is wrong with value in field f, in language lang ("en",
// "ru"), or "" when nothing is: a required field left empty (spaces count as
// empty), or a number field whose value is not a number. The Slack adapter shows it
// under the field (view_submission's response_action "errors").
func FieldError(lang string, f Field, value string) string {
	value = strings.TrimSpace(value)
	switch {
	case value == "" && f.Required:
		return tr(lang, "inputs.required")
	case value != "" && f.Number && !isNumber(value):
		return tr(lang, "inputs.number")
	}
	return ""
}

// isNumber reports whether s is a number ("1500", "2.5", "1 500", "1,500").
func isNumber(s string) bool {
	s = strings.NewReplacer(" ", "", "\u00a0", "", ",", "").Replace(s)
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// fieldOf returns the modal field of workflow input in.
func fieldOf(in workflow.Input) Field {
	return Field{ID: in.ID, Label: in.Name(), Required: in.Required, Number: in.Type == workflow.InputNumber}
}

// inputsModal returns the modal that asks for the missing inputs of def, titled with
// the workflow's title, in language lang.
func inputsModal(def *workflow.Definition, lang string, missing []workflow.Input) Modal {
	m := Modal{Title: def.Title, Submit: tr(lang, "inputs.submit"), Lang: lang}
	for _, in := range missing {
		m.Fields = append(m.Fields, fieldOf(in))
	}
	return m
}

// inputsCard asks for the missing inputs: the first one in words (a reply in the
// thread fills it), all of them with the button that opens their modal.
func (t *wfTurn) inputsCard(missing []workflow.Input) Card {
	text := tr(t.lang, "input.ask", missing[0].Name())
	m := inputsModal(t.def(), t.lang, missing)
	return Card{Text: text, Blocks: []Block{
		{Kind: BlockSection, Text: text},
		{Kind: BlockActions, Buttons: []Button{{
			Label: tr(t.lang, "inputs.fill"), Style: "primary",
			Action: t.cards().action(ActionInputs, "", 0, ""), Modal: &m,
		}}},
	}}
}

// renderInputs shows an evInputs event: the message that asked for inputs is closed,
// saying who gave them (by, "" when nobody did), and when inputs are still missing
// and no message asks for them, one is posted (State.InputsTS).
func (t *wfTurn) renderInputs(ctx context.Context, by string) {
	ws := t.ws()
	if ws == nil || t.def() == nil {
		return
	}
	if by != "" && ws.InputsTS != "" {
		text := "✓ " + tr(t.lang, "inputs.given", by)
		t.update(ctx, ws.InputsTS, Card{Text: text, Blocks: []Block{{Kind: BlockContext, Text: text}}})
		ws.InputsTS = ""
	}
	missing := t.def().MissingInputs(ws.Inputs)
	if len(missing) == 0 || ws.InputsTS != "" {
		return
	}
	card := t.inputsCard(missing)
	if ws.InputsTS = t.post(ctx, card); ws.InputsTS == "" && !t.r.out.lost() {
		t.reply = card.Text // the card was refused: the question alone, as the turn's reply
	}
}

// submitInputs stores the values of the inputs modal's submission a (a value that
// FieldError rejects is left out), then asks for what is still missing or goes on
// with the run. A run that lacks no input refuses it as out of date.
func (t *wfTurn) submitInputs(ctx context.Context, a ActionInput) error {
	ws := t.ws()
	if ws.Status != workflow.RunRunning || len(t.def().MissingInputs(ws.Inputs)) == 0 {
		return &workflow.Refusal{Reason: workflow.NotCurrent}
	}
	if ws.Inputs == nil {
		ws.Inputs = map[string]string{}
	}
	for id, v := range a.Values {
		in, ok := t.def().Input(id)
		if !ok || FieldError(t.lang, fieldOf(*in), v) != "" || strings.TrimSpace(v) == "" {
			continue
		}
		ws.Inputs[id] = strings.TrimSpace(v)
	}
	t.events = append(t.events, cardEvent{kind: evInputs, by: t.user})
	if len(t.def().MissingInputs(ws.Inputs)) > 0 {
		return nil
	}
	return t.then(ctx, t.advance)
}

// openStartModal opens, for the slash command of r that started def in the thread of
// key with text, the modal of the inputs the text leaves missing (a new thread has no
// earlier messages to fill them), on the command's trigger_id. When it cannot (no
// trigger, a re-run whose trigger expired, a Messenger without modals, views.open
// failing), the thread's message asks for them; that message is posted either way.
func (s *Service) openStartModal(ctx context.Context, r *run, def *workflow.Definition, text string, key Key, lang string) {
	cmd := r.in.Command
	mo, ok := s.rawMessenger.(ModalOpener) // the modal shows the workflow's own labels
	if !ok || cmd.TriggerID == "" || r.in.Attempts > 1 {
		return
	}
	missing := def.MissingInputs(def.FillInputs(text))
	if len(missing) == 0 {
		return
	}
	if def.Locale != "" {
		lang = uiLang(def.Locale)
	}
	a := Action{Name: ActionInputs, Channel: key.ChannelID, ThreadTS: key.ThreadTS}
	if err := mo.OpenModal(ctx, cmd.TriggerID, a, inputsModal(def, lang, missing)); err != nil {
		r.log.Info("the inputs modal did not open; the thread asks for the inputs", "error", err)
	}
}

// answerQuestion answers, with the assistant pipeline, the reply that the "Just a
// question" button of the card asking what it meant carries (workflow_reply.go): an
// answer turn in the thread, the artifact left as it is. The reply is the newest
// person's message of the history already; it is the prompt's text instead.
func (s *Service) answerQuestion(ctx context.Context, r *run, cp *Checkpoint) error {
	a := r.in.Action
	question := a.Action.Arg
	history := dialogue(cp.Messages)
	for i := len(history) - 1; i >= 0; i-- {
		if history[i].Role == RoleUser {
			if history[i].Text == question || strings.HasPrefix(history[i].Text, question) {
				history = append(history[:i:i], history[i+1:]...)
			}
			break
		}
	}
	prompt := Prompt{
		Key:      r.in.Key,
		Summary:  cp.Conversation.State.Summary,
		History:  s.clipAll(history),
		UserID:   a.UserID,
		Text:     clip(question, s.cfg.MaxPromptChars),
		Entities: cp.Conversation.State.Entities,
	}
	prompt.ContextChannelID = contextChannel(cp.Conversation.State)
	return s.respond(ctx, r, cp, prompt, nil)
}
