package conversation

import (
	"github.com/threadwright/threadwright/conversation/workflow"
)

// Typed decisions (README, "Typed decisions"): a reply typed in the thread of an
// artifact under review is read as an approval, a change request or a question. The
// phrase list (workflow.ClassifyReply) decides the common replies without a model
// call; the small model (WorkflowAgent.ClassifyReview) the rest. An approval is the
// Approve button's, under the same permission rule; a change request is the editor's
// rewrite; a question is left to the assistant, which answers it in the thread and
// leaves the artifact as it is (so does the "Just a question" button). A reply that reads more than one way is asked about
// with buttons that carry it.

// ReviewReading is what a typed reply to an artifact under review asks for.
type ReviewReading struct {
	// Decision is workflow.DecisionApprove, DecisionChange, DecisionQuestion or
	// DecisionAmbiguous.
	Decision workflow.Decision
	// Confidence is the model's, from 0 to 1.
	Confidence float64
}

// MinReviewConfidence is the least confidence (0 to 1) at which the model's reading of
// a typed reply is acted on; below it the person is asked.
const MinReviewConfidence = 0.6

// The actions of the card that asks what a typed reply meant; Arg is the reply.
const (
	ActionReplyChange   ActionName = "reply_change"   // the reply is a change request
	ActionReplyQuestion ActionName = "reply_question" // the reply is a question
)
