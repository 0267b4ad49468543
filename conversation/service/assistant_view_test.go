package service_test

import (
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation"
)

func TestParseSuggestedPrompts(t *testing.T) {
	sp, err := conversation.ParseSuggestedPrompts([]byte(`title: Try
default:
  - title: A
    message: a
channels:
  C1:
    - title: C
      message: c
`))
	if err != nil {
		t.Fatal(err)
	}
	wf := []conversation.SuggestedPrompt{{Title: "Start: Blog", Message: "start blog"}, {Title: "Start: Brief", Message: "start brief"}}
	if got := sp.For("C1", nil); len(got) != 1 || got[0].Message != "c" {
		t.Errorf("C1's prompts: %+v", got)
	}
	if got := sp.For("C2", wf); len(got) != 3 || got[0].Message != "a" || got[2].Message != "start brief" {
		t.Errorf("default prompts with workflows: %+v", got)
	}
	var none *conversation.SuggestedPrompts
	if got := none.For("", nil); len(got) != len(conversation.DefaultSuggestedPrompts) {
		t.Errorf("built-in prompts: %+v", got)
	}

	for name, bad := range map[string]string{
		"five prompts":  "default:\n" + strings.Repeat("  - {title: A, message: a}\n", 5),
		"no message":    "default:\n  - {title: A}\n",
		"unknown field": "prompts: []\n",
		"channel title": "channels:\n  C1:\n    - {message: a}\n",
	} {
		if _, err := conversation.ParseSuggestedPrompts([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestSuggestedPromptsKeepAWorkflow: a full list leaves the last slot to a workflow.
func TestSuggestedPromptsKeepAWorkflow(t *testing.T) {
	four := make([]conversation.SuggestedPrompt, 4)
	for i := range four {
		four[i] = conversation.SuggestedPrompt{Title: "T", Message: "m"}
	}
	sp := &conversation.SuggestedPrompts{Default: four}
	got := sp.For("", []conversation.SuggestedPrompt{{Title: "Start: Blog", Message: "start blog"}})
	if len(got) != conversation.MaxSuggestedPrompts || got[3].Message != "start blog" {
		t.Errorf("prompts %+v", got)
	}
}
