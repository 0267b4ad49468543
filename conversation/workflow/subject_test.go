package workflow_test

import (
	"testing"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// TestStatedSubject: a message that states a subject for a piece of writing gives it;
// a question, whatever it mentions, and chatter give none.
func TestStatedSubject(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"We need a post on schema migrations", "schema migrations"},
		{"we need an article about Go generics for data engineers.", "Go generics for data engineers"},
		{"Let's write about onboarding remote hires", "onboarding remote hires"},
		{"Time for a product brief for meal kits for students!", "meal kits for students"},
		{"Нужна статья про миграции схем", "миграции схем"},
		{"What can you do, and which tools can you use here?", ""},
		{"Can you write a post about Go generics?", ""},
		{"how do I write a post on Go generics", ""},
		{"Как написать пост про миграции?", ""},
		{"Let's plan some posts", ""},
		{"", ""},
	} {
		if got := workflow.StatedSubject(tc.text); got != tc.want {
			t.Errorf("StatedSubject(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}
