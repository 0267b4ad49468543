package render

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// goldenPipelineWorkflow has an auto artifact with one item each: its card, the
// pipeline's restart notice and the tally.
const goldenPipelineWorkflow = `name: digest
title: News digest
artifacts:
  - {id: topics, title: Topics, mode: choice}
  - id: stories
    title: Stories
    mode: auto
    depends_on: [topics]
    foreach: topics
`

// goldenAssistantCards are the assistant's cards and notices (progress, Stop, tool
// confirmation, the notes that close them), in lang, by name.
func goldenAssistantCards(lang string) map[string]any {
	key := conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1.0"}
	ask := func(reason, args string) *conversation.ToolApproval {
		return &conversation.ToolApproval{ID: "in1#abc", UserID: "U1", Request: "delete the old tickets",
			Tool: conversation.PendingTool{CallID: "c1", Name: "delete_tickets", Arguments: args, Reason: reason}}
	}
	long := `{"ids": "` + strings.Repeat("T-1, ", 1000) + `"}` // cut on the card
	var huge strings.Builder                                   // too many keys to show
	huge.WriteString(`{`)
	for i := range 400 {
		fmt.Fprintf(&huge, `"k%03d":"%s",`, i, strings.Repeat("x", 50))
	}
	huge.WriteString(`"end":1}`)
	return map[string]any{
		"stop_card":        StopCard(lang, key, "in1", "Searching the knowledge base…"),
		"stream_stop":      StreamStopCard(lang, key, "in1"),
		"approval":         ApprovalCard(lang, key, ask("", `{"ids": ["T-1", "T-2"]}`)),
		"approval_destroy": ApprovalCard(lang, key, ask(conversation.ApprovalDestructive, long)),
		"approval_outside": ApprovalCard(lang, key, ask(conversation.ApprovalAfterUntrusted, huge.String())),
		"arguments_file":   ArgumentsFile(lang, ask("", long).Tool),
		"assistant_notices": []string{DoneNote(lang, nil), DoneNote(lang, []string{"calculate", "web_search"}),
			StoppedNote(lang, conversation.Stopped{By: "U1"}), StoppedNote(lang, conversation.Stopped{NewMessage: true}),
			Tr(lang, "progress.stopped"), Tr(lang, "progress.restarting"), Tr(lang, "progress.confirm", "U1", "delete_tickets"),
			Tr(lang, "approval.approved", "U1"), Tr(lang, "approval.denied", "U1"), Tr(lang, "approval.voided"),
			Tr(lang, "approval.not_current"), Tr(lang, "approval.not_yours", "U1"), Tr(lang, "approval.cannot_approve"),
			Tr(lang, "approval.not_shown", "delete_tickets")},
		"write_approval_notes": []string{Tr(lang, "approval.approved", "U1"), Tr(lang, "write_approval.denied", "U1"),
			Tr(lang, "write_approval.begun", "U1"), Tr(lang, "write_approval.rewritten"), Tr(lang, "write_approval.cancelled"),
			Tr(lang, "write_approval.outdated"), Tr(lang, "write_approval.later")},
		"failures": []string{
			FailureMessage(lang, conversation.Failure{Cause: conversation.CauseModel}, errors.New("x"), "retry.answer"),
			FailureMessage(lang, conversation.Failure{Cause: conversation.CauseTool, Tool: "web_search"}, errors.New("x"), "retry.step"),
			FailureMessage(lang, conversation.Failure{Cause: conversation.CauseSlack}, errors.New("x"), ""),
			FailureMessage(lang, conversation.Failure{Cause: conversation.CauseStore}, errors.New("x"), "retry.command"),
			FailureMessage(lang, conversation.Failure{}, errors.New("x"), ""),
		},
		"files_refused": FilesRefused(lang, []conversation.AttachedFile{
			{Ref: conversation.FileRef{Name: "scan.pdf"}, Refused: "it has no text to read"}}),
		"messages_tab":   MessagesTabGreeting("Hi! Ask me anything.", []conversation.SuggestedPrompt{{Title: "Start: Product brief", Message: "start product-brief"}}),
		"command_failed": CommandFailedCard(lang, Tr(lang, "failed.model"), conversation.Input{ID: "in1", Key: key, Command: &conversation.CommandInput{UserID: "U1", Line: "start product-brief"}}),
	}
}

// goldenPipelineCards are the cards of a pipeline's auto artifact, in lang.
func goldenPipelineCards(t *testing.T, lang string) map[string]any {
	t.Helper()
	def, err := workflow.Parse("digest.yaml", []byte(goldenPipelineWorkflow))
	if err != nil {
		t.Fatal(err)
	}
	c := Cards{Lang: lang, Def: def, Format: func(s string) string { return s }, Key: conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1.0"}}
	stories, _ := def.Artifact("stories")
	now := time.Date(2026, 12, 1, 22, 47, 0, 0, time.UTC)
	st := &workflow.ArtifactState{Status: workflow.StatusGenerated, Rev: 1, Items: []workflow.ItemState{
		{Title: "Ports reopen", Status: workflow.ItemDone, Text: "Ports reopened on Monday.\nMore follows."},
		{Title: "Rail strike", Status: workflow.ItemFailed, Reason: "the model did not answer in time", Attempts: 3}}}
	ws := &workflow.State{Name: "digest", StartedBy: "U1", Locale: lang, Status: workflow.RunRunning,
		Artifacts: map[string]*workflow.ArtifactState{"topics": {Status: workflow.StatusApproved, Rev: 1, Text: "Ports; rail"}, "stories": st},
		Pipeline:  &workflow.PipelineState{ID: "p1", StartedAt: now.Add(-5 * time.Minute), Artifacts: []string{"stories"}}}
	stale := &workflow.StaleList{Changed: "topics", Rows: []workflow.StaleRow{{Artifact: "stories"}}}
	return map[string]any{
		"pipeline_artifact": c.pipelineArtifact(stories, st),
		"interrupted":       c.Interrupted(ws, now),
		"tally":             c.Tally(ws),
		"stale_replaced":    c.StaleReplaced(stale),
		"runs":              Runs(lang, Tr(lang, "runs.status", 1), []Run{{Key: c.Key, Def: def, State: ws, Waiting: workflow.Machine{Def: def}.Waiting(ws), Link: "https://t.slack.com/archives/C1/p1"}}),
	}
}
