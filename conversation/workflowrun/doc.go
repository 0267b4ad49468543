// Package workflowrun is the imperative shell around the pure workflow machine
// (package conversation/workflow; docs/architecture.md, "Workflow machine"): it runs
// the turns of artifact workflows in a thread.
//
// A turn (Handler.Turn, handle.go) decodes its input, applies the machine's
// transitions and the agent calls the scheduling rule asks for to a copy of the run,
// shows what changed (from package render) and saves through turns.Run. A step that
// fails leaves the run as it was, with Retry. The turn's state is wfTurn (turn.go);
// its jobs are views of it, each with its own files:
//
//   - decoder reads the input into steps: input.go, reply.go, modal.go.
//   - wfTurn's own methods are the steps that move a run on: steps.go.
//   - author asks the workflow agent for options and texts and judges them:
//     author.go, enhance.go, verdict.go.
//   - poster shows what the turn changed in the thread: cards.go.
//   - pipelineRun runs the auto artifacts (docs/architecture.md, "Pipelines"): auto.go
//     starts them, pipeline*.go write their items a few at once, checkpointing each.
//
// The files stand in layers, each using only those below it: handle.go and
// channel.go on top, then the decoder, the pipeline, the steps, the author and the
// poster, then turn.go, and handler.go, command.go, events.go and metrics.go at the
// bottom.
package workflowrun
