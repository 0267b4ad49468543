package service

import (
	"context"
	"strconv"
	"strings"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// FieldError returns what is wrong with value in field f, in language lang ("en",
// "ru"), or "" when nothing is: a required field left empty (spaces count as
// empty), or a number field whose value is not a number. The Slack adapter shows it
// under the field (view_submission's response_action "errors").
func FieldError(lang string, f conversation.Field, value string) string {
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
func fieldOf(in workflow.Input) conversation.Field {
	return conversation.Field{ID: in.ID, Label: in.Name(), Required: in.Required, Number: in.Type == workflow.InputNumber}
}

// inputsModal returns the modal that asks for the missing inputs of def, titled with
// the workflow's title, in language lang.
func inputsModal(def *workflow.Definition, lang string, missing []workflow.Input) conversation.Modal {
	m := conversation.Modal{Title: def.Title, Submit: tr(lang, "inputs.submit"), Lang: lang}
	for _, in := range missing {
		m.Fields = append(m.Fields, fieldOf(in))
	}
	return m
}

// inputsCard asks for the missing inputs: the first one in words (a reply in the
// thread fills it), all of them with the button that opens their modal.
func (t *wfTurn) inputsCard(missing []workflow.Input) conversation.Card {
	text := tr(t.lang, "input.ask", missing[0].Name())
	m := inputsModal(t.def(), t.lang, missing)
	return conversation.Card{Text: text, Blocks: []conversation.Block{
		{Kind: conversation.BlockSection, Text: text},
		{Kind: conversation.BlockActions, Buttons: []conversation.Button{{
			Label: tr(t.lang, "inputs.fill"), Style: "primary",
			Action: t.cards().action(conversation.ActionInputs, "", 0, ""), Modal: &m,
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
		t.update(ctx, ws.InputsTS, conversation.Card{Text: text, Blocks: []conversation.Block{{Kind: conversation.BlockContext, Text: text}}})
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
func (t *wfTurn) submitInputs(ctx context.Context, a conversation.ActionInput) error {
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
func (s *Service) openStartModal(ctx context.Context, r *run, def *workflow.Definition, text string, key conversation.Key, lang string) {
	cmd := r.in.Command
	mo, ok := s.rawMessenger.(conversation.ModalOpener) // the modal shows the workflow's own labels
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
	a := conversation.Action{Name: conversation.ActionInputs, Channel: key.ChannelID, ThreadTS: key.ThreadTS}
	if err := mo.OpenModal(ctx, cmd.TriggerID, a, inputsModal(def, lang, missing)); err != nil {
		r.log.Info("the inputs modal did not open; the thread asks for the inputs", "error", err)
	}
}

// answerQuestion answers, with the assistant pipeline, the reply that the "Just a
// question" button of the card asking what it meant carries (workflow_reply.go): an
// answer turn in the thread, the artifact left as it is. The reply is the newest
// person's message of the history already; it is the prompt's text instead.
func (s *Service) answerQuestion(ctx context.Context, r *run, cp *conversation.Checkpoint) error {
	a := r.in.Action
	question := a.Action.Arg
	history := dialogue(cp.Messages)
	for i := len(history) - 1; i >= 0; i-- {
		if history[i].Role == conversation.RoleUser {
			if history[i].Text == question || strings.HasPrefix(history[i].Text, question) {
				history = append(history[:i:i], history[i+1:]...)
			}
			break
		}
	}
	prompt := conversation.Prompt{
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
