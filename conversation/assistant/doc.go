// Package assistant is the assistant's turn handler (docs/architecture.md, "Data flow
// of one Slack event"): a person's message is answered by scope check → ReAct
// executor → synthesizer, streamed into the thread where Slack can, with a progress
// message, thinking steps and Stop while tools run.
//
//   - answer.go: the pipeline and the turn that answers (Handler.AnswerMessage).
//   - progress.go, stream.go: what the thread shows while the answer is written.
//   - approval.go: a side-effect tool call waits for a person's Approve
//     (docs/tools.md, "Tool policy"), and the turn resumes with the decision.
//   - view.go: Slack's assistant view (suggested prompts, titles, the viewed
//     channel) and direct messages.
//   - retry.go: Retry of a failed answer; feedback.go: feedback on answers.
//
// A Handler runs inside a turns.Run: it posts through the run's outbox and ends the
// turn with Run.Finish; what it shows comes from package render.
package assistant
