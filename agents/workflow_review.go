package agents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/agents/function"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
	"github.com/threadwright/threadwright/internal/textcut"
)

// reviewTool is the function the review classifier must call.
const reviewTool = "classify_review_reply"

// maxReviewContext is how many characters of the artifact the classifier sees.
const maxReviewContext = 1500

// ClassifyReview reads a person's typed reply to r.Current, the artifact under
// review, with the small model (SmallModel), which must call classify_review_reply
// (tool_choice forces it) with a decision (approve, change, question or ambiguous)
// and a confidence from 0 to 1. An answer that gives no known decision reads as
// ambiguous, so the person is asked (docs/workflows.md, "Typed decisions"). Errors: the model
// client's (see Client.Complete), including ctx's, with the usage so far.
func (a *WorkflowAgent) ClassifyReview(ctx context.Context, r conversation.ArtifactRequest, reply string) (conversation.ReviewReading, conversation.Usage, error) {
	title := ""
	if r.Artifact != nil {
		title = r.Artifact.Title
	}
	system := "You read a person's reply to a draft they are reviewing in a chat thread, and decide what the reply asks for:\n" +
		"- approve: they accept the draft as it is;\n" +
		"- change: they ask for the draft to be changed (anything to add, remove or rewrite);\n" +
		"- question: they ask something about the draft and want an answer, not a new version;\n" +
		"- ambiguous: it could be read more than one way.\n" +
		"Call " + reviewTool + " with the decision and your confidence from 0 to 1."
	user := fmt.Sprintf("Draft %q (start):\n%s\n\nReply:\n%s", title, textcut.BytesMark(r.Current, maxReviewContext, textcut.Truncated), strings.TrimSpace(reply))
	req := function.Forced(a.smallModel, system, user, openai.FunctionDefinition{
		Name:        reviewTool,
		Description: "Record what the reply to the draft asks for.",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"decision":{"type":"string","enum":["approve","change","question","ambiguous"]},` +
			`"confidence":{"type":"number","minimum":0,"maximum":1}},` +
			`"required":["decision","confidence"],"additionalProperties":false}`),
	})
	comp, err := a.client.Complete(ctx, req)
	if err != nil && !errors.Is(err, ErrEmptyResponse) {
		return conversation.ReviewReading{}, comp.Usage, fmt.Errorf("agents: classify review reply: %w", err)
	}
	return parseReviewReading(comp), comp.Usage, nil
}

// parseReviewReading reads the classifier's classify_review_reply call; no usable
// call reads as ambiguous with no confidence.
func parseReviewReading(c Completion) conversation.ReviewReading {
	for _, tc := range c.ToolCalls {
		if tc.Function.Name != reviewTool {
			continue
		}
		var args struct {
			Decision   string  `json:"decision"`
			Confidence float64 `json:"confidence"`
		}
		if json.Unmarshal([]byte(tc.Function.Arguments), &args) != nil {
			continue
		}
		switch d := workflow.Decision(strings.ToLower(strings.TrimSpace(args.Decision))); d {
		case workflow.DecisionApprove, workflow.DecisionChange, workflow.DecisionQuestion, workflow.DecisionAmbiguous:
			return conversation.ReviewReading{Decision: d, Confidence: args.Confidence}
		}
	}
	return conversation.ReviewReading{Decision: workflow.DecisionAmbiguous}
}
