package render

import (
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// TestRefusedLines: an artifact's card names the tool calls its writes refused, one
// line per reason, each tool once, in the thread's language; none when nothing was
// refused.
func TestRefusedLines(t *testing.T) {
	a := &workflow.Artifact{ID: "notes", Title: "Notes"}
	st := &workflow.ArtifactState{Status: workflow.StatusGenerated, Text: "Text.", Refused: []workflow.RefusedCall{
		{Tool: "crm__note", Reason: conversation.ApprovalAfterUntrusted},
		{Tool: "crm__wipe", Reason: conversation.ApprovalDestructive},
		{Tool: "crm__tag", Reason: conversation.ApprovalAfterUntrusted},
	}}
	for lang, want := range map[string][]string{
		"en": {"🛑 Not run: `crm__note`, `crm__tag`. This text was written from content from outside", "🛑 Not run: `crm__wipe`. This tool needs a person's confirmation"},
		"ru": {"🛑 Не выполнено: `crm__note`, `crm__tag`. Этот текст написан по материалам извне", "🛑 Не выполнено: `crm__wipe`. Этот инструмент требует подтверждения"},
	} {
		line := Cards{Lang: lang}.grading().passLine(a, st)
		for _, w := range want {
			if !strings.Contains(line, w) {
				t.Errorf("%s: passLine = %q, lacks %q", lang, line, w)
			}
		}
		if strings.Count(line, "\n") != 1 {
			t.Errorf("%s: passLine = %q; want two lines", lang, line)
		}
	}
	st.Refused = nil
	if line := (Cards{Lang: "en"}).grading().passLine(a, st); line != "" {
		t.Errorf("passLine without refusals = %q", line)
	}
}
