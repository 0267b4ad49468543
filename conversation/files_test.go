package conversation_test

import (
	"encoding/json"
	"testing"

	"github.com/threadwright/threadwright/conversation"
)

// A person's message saved with files says so (its text holds untrusted content);
// other messages, and a Meta of another shape, do not.
func TestMessageHasFiles(t *testing.T) {
	meta, _ := json.Marshal(conversation.FilesMeta{Files: []conversation.FileRef{{ID: "F1", Name: "a.pdf"}}})
	cases := []struct {
		m    conversation.Message
		want bool
	}{
		{conversation.Message{Role: conversation.RoleUser, Meta: meta}, true},
		{conversation.Message{Role: conversation.RoleUser}, false},
		{conversation.Message{Role: conversation.RoleUser, Meta: json.RawMessage(`{"files":[]}`)}, false},
		{conversation.Message{Role: conversation.RoleUser, Meta: json.RawMessage(`{"tools":["x"]}`)}, false},
		{conversation.Message{Role: conversation.RoleAssistant, Meta: meta}, false},
	}
	for i, c := range cases {
		if got := c.m.HasFiles(); got != c.want {
			t.Errorf("case %d: HasFiles = %v, want %v", i, got, c.want)
		}
	}
}
