package agents_test

import (
	"context"
	"testing"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// TestWorkflowClassifyReview: the small model reads a typed reply to an artifact
// under review through classify_review_reply; an answer without a usable call reads as
// ambiguous, and a model failure is returned.
func TestWorkflowClassifyReview(t *testing.T) {
	ctx := context.Background()
	r := audienceRequest(func(r *conversation.ArtifactRequest) { r.Current = "Support leads at mid-size SaaS companies." })
	for _, tc := range []struct {
		name  string
		reply openaitest.Response
		want  conversation.ReviewReading
	}{
		{"change", commit("classify_review_reply", map[string]any{"decision": "change", "confidence": 0.9}),
			conversation.ReviewReading{Decision: workflow.DecisionChange, Confidence: 0.9}},
		{"question", commit("classify_review_reply", map[string]any{"decision": "Question", "confidence": 0.8}),
			conversation.ReviewReading{Decision: workflow.DecisionQuestion, Confidence: 0.8}},
		{"unknown decision", commit("classify_review_reply", map[string]any{"decision": "maybe", "confidence": 1}),
			conversation.ReviewReading{Decision: workflow.DecisionAmbiguous}},
		{"prose", openaitest.Response{Text: "It is a change request."},
			conversation.ReviewReading{Decision: workflow.DecisionAmbiguous}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := MustServer(t)
			agent, _ := newWorkflowAgent(t, srv)
			srv.Push(tc.reply)
			got, _, err := agent.ClassifyReview(ctx, r, "mention the budget")
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("reading = %+v, want %+v", got, tc.want)
			}
			req, _ := srv.LastRequest()
			checkRequest(t, req, "gpt-small", "classify_review_reply")
			contains(t, "task", req.LastUserMessage(), "mention the budget", "Support leads at mid-size SaaS companies.")
		})
	}
	t.Run("cancelled", func(t *testing.T) {
		srv := MustServer(t)
		agent, _ := newWorkflowAgent(t, srv)
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, _, err := agent.ClassifyReview(cctx, r, "mention the budget"); err == nil {
			t.Fatal("a cancelled classification did not fail")
		}
	})
}
