// Package assistant is the assistant's turn handler (docs/architecture.md, "Data flow
// of one Slack event"): a person's message is answered by scope check → ReAct
// executor → synthesizer, streamed into the thread where Slack can, with a progress
// message, thinking steps and Stop while tools run.
//
// Its files stand in layers, each using only those below it:
//
//   - view.go, approval.go, retry.go, edit.go: Slack's assistant view (suggested
//     prompts, titles, the viewed channel) and direct messages; a person's decision
//     on a tool call that waited for Approve (docs/tools.md, "Tool policy"), which
//     resumes the answer; Retry of a failed answer; a person's edit or deletion of
//     a message (docs/architecture.md, "Edits and deletions").
//   - answer.go: the pipeline, and the turn that answers (Handler.AnswerMessage),
//     step by step.
//   - ask.go, failure.go: the approval card of a side-effect tool call; a failed
//     answer's message with Retry.
//   - progress.go, stream.go: what the thread shows while the answer is written.
//   - feedback.go: feedback on answers.
//   - handler.go, config.go, trace.go: the Handler, its configuration, the scope
//     check's span.
//
// A Handler runs inside a turns.Run: it posts through the run's outbox and ends the
// turn with Run.Finish; what it shows comes from package render.
package assistant
