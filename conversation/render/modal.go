package render

import (
	"strconv"
	"strings"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

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

// FieldError returns what is wrong with value in field f, in language lang ("en",
// "ru"), or "" when nothing is: a required field left empty (spaces count as
// empty), or a number field whose value is not a number. The Slack adapter shows it
// under the field (view_submission's response_action "errors").
func FieldError(lang string, f conversation.Field, value string) string {
	value = strings.TrimSpace(value)
	switch {
	case value == "" && f.Required:
		return Tr(lang, "inputs.required")
	case value != "" && f.Number && !isNumber(value):
		return Tr(lang, "inputs.number")
	}
	return ""
}

// isNumber reports whether s is a number ("1500", "2.5", "1 500", "1,500").
func isNumber(s string) bool {
	s = strings.NewReplacer(" ", "", "\u00a0", "", ",", "").Replace(s)
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// FieldOf returns the modal field of workflow input in.
func FieldOf(in workflow.Input) conversation.Field {
	return conversation.Field{ID: in.ID, Label: in.Name(), Required: in.Required, Number: in.Type == workflow.InputNumber}
}

// InputsModal returns the modal that asks for the missing inputs of def, titled with
// the workflow's title, in language lang.
func InputsModal(def *workflow.Definition, lang string, missing []workflow.Input) conversation.Modal {
	m := conversation.Modal{Title: def.Title, Submit: Tr(lang, "inputs.submit"), Lang: lang}
	for _, in := range missing {
		m.Fields = append(m.Fields, FieldOf(in))
	}
	return m
}
