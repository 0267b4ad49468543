package service_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/render"
)

func TestFieldError(t *testing.T) {
	for _, tt := range []struct {
		lang, value string
		f           conversation.Field
		want        string
	}{
		{"en", "Go", conversation.Field{Required: true}, ""},
		{"en", "  ", conversation.Field{Required: true}, "Please fill this in."},
		{"ru", "", conversation.Field{Required: true, Number: true}, "Заполните это поле."},
		{"en", "", conversation.Field{Number: true}, ""},
		{"en", "1 500", conversation.Field{Number: true}, ""},
		{"en", "2.5", conversation.Field{Number: true}, ""},
		{"en", "many", conversation.Field{Number: true}, "Enter a number, like 1500."},
		{"ru", "много", conversation.Field{Number: true}, "Введите число, например 1500."},
	} {
		if got := render.FieldError(tt.lang, tt.f, tt.value); got != tt.want {
			t.Errorf("FieldError(%s, %+v, %q) = %q, want %q", tt.lang, tt.f, tt.value, got, tt.want)
		}
	}
}

// submitInputs submits the inputs modal with values, as user.
func (h *wfHarness) submitInputs(user string, values map[string]string) {
	h.n++
	a := conversation.Action{Name: conversation.ActionInputs, Channel: key.ChannelID, ThreadTS: key.ThreadTS}
	h.do(conversation.Input{ID: fmt.Sprintf("int:T1:trigger%d", h.n), Key: key, Kind: conversation.KindAction,
		Action: &conversation.ActionInput{Action: a, UserID: user, Values: values}})
}

// TestWorkflowInputsModal: a start without the blog's topic asks for it (a message
// kept in State.InputsTS); the modal's submission fills it (a value that is not valid
// is left out) and the run proposes options; a second submission is out of date.
func TestWorkflowInputsModal(t *testing.T) {
	h := newWF(t, "U1")
	h.say("U1", "start blog")
	if got := strings.Join(h.drain(), "\n"); !strings.Contains(got, "Before I start, tell me: *What is the article about?*") {
		t.Fatalf("the start posted %q", got)
	}
	if ws := h.state(); ws.InputsTS == "" || ws.Inputs["topic"] != "" {
		t.Fatalf("state after the start: %+v", ws)
	}
	n := h.callCount()
	h.submitInputs("U2", map[string]string{"topic": " Go generics ", "wordcount": "many", "layout": "how-to"})
	ws := h.state()
	if ws.Inputs["topic"] != "Go generics" || ws.Inputs["wordcount"] != "1500" || ws.Inputs["layout"] != "how-to" || ws.InputsTS != "" {
		t.Fatalf("inputs after the submission: %v (asking message %q)", ws.Inputs, ws.InputsTS)
	}
	// The blog's outline is proposed, then reviewed once (self_review).
	if got := h.callsSince(n); got != "options plan|options plan" {
		t.Fatalf("calls after the submission: %q", got)
	}
	h.drain()
	h.submitInputs("U1", map[string]string{"topic": "Rust"})
	if got := h.state().Inputs["topic"]; got != "Go generics" {
		t.Fatalf("a second submission changed the topic to %q", got)
	}
}
