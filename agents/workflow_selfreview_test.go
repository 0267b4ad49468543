package agents_test

import (
	"context"
	"testing"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/conversation"
)

// TestWorkflowProposeOptionsReview: a request with Review asks the model to review
// those options against the artifact's criteria and revise them once; one without
// asks for none.
func TestWorkflowProposeOptionsReview(t *testing.T) {
	const sentence = "Review these options against the criteria below, then revise them once:"
	srv := MustServer(t)
	agent, _ := newWorkflowAgent(t, srv)
	srv.Push(commit(agents.CommitOptionsTool, threeOptions))
	srv.Push(commit(agents.CommitOptionsTool, threeOptions))
	if _, _, err := agent.ProposeOptions(context.Background(), audienceRequest()); err != nil {
		t.Fatal(err)
	}
	first, _ := srv.LastRequest()
	lacks(t, "task", first.LastUserMessage(), sentence)
	opts, _, err := agent.ProposeOptions(context.Background(), audienceRequest(func(r *conversation.ArtifactRequest) { r.Review = audienceOptions }))
	if err != nil || len(opts) != 3 {
		t.Fatalf("review: %v %+v", err, opts)
	}
	req, _ := srv.LastRequest()
	contains(t, "task", req.LastUserMessage(), sentence+"\nCriteria:\n- specific: Names a concrete group of people",
		"Options:\nA. Support leads: Heads of support at SaaS companies with 20 to 200 agents.\nB. Missed SLAs:",
		"C. Founders: Founders who still answer tickets themselves.", "Call commit_artifact_options with exactly 3 options.")
}
