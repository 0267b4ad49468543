package workflowrun

import (
	"context"
	"strings"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/render"
	"github.com/threadwright/threadwright/conversation/turns"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// The inputs a workflow still lacks once it started (docs/workflows.md, "Workflows"): the
// start text and the thread's earlier messages fill what they can; for the rest the
// thread gets a message that asks for the first one (a reply there fills it) with a
// "Fill in the details" button, which opens a modal with one input per missing
// input. A slash command's trigger_id opens that modal at once (channelCommand). The
// modal's submission (ActionInputs) stores the values and the run goes on.

// submitInputs stores the values of the inputs modal's submission a (a value that
// FieldError rejects is left out), then asks for what is still missing or goes on
// with the run. A run that lacks no input refuses it as out of date.
func (t decoder) submitInputs(ctx context.Context, a conversation.ActionInput) error {
	ws := t.ws()
	if ws.Status != workflow.RunRunning || len(t.def().MissingInputs(ws.Inputs)) == 0 {
		return &workflow.Refusal{Reason: workflow.NotCurrent}
	}
	if ws.Inputs == nil {
		ws.Inputs = map[string]string{}
	}
	for id, v := range a.Values {
		in, ok := t.def().Input(id)
		if !ok || render.FieldError(t.lang, render.FieldOf(*in), v) != "" || strings.TrimSpace(v) == "" {
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
func (s *Handler) openStartModal(ctx context.Context, r *turns.Run, def *workflow.Definition, text string, key conversation.Key, lang string) {
	cmd := r.In.Command
	mo, ok := s.raw.(conversation.ModalOpener) // the modal shows the workflow's own labels
	if !ok || cmd.TriggerID == "" || r.In.Attempts > 1 {
		return
	}
	missing := def.MissingInputs(def.FillInputs(text))
	if len(missing) == 0 {
		return
	}
	if def.Locale != "" {
		lang = render.UILang(def.Locale)
	}
	a := conversation.Action{Name: conversation.ActionInputs, Channel: key.ChannelID, ThreadTS: key.ThreadTS}
	if err := mo.OpenModal(ctx, cmd.TriggerID, a, render.InputsModal(def, lang, missing)); err != nil {
		r.Log.Info("the inputs modal did not open; the thread asks for the inputs", "error", err)
	}
}
