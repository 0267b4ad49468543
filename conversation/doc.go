// Package conversation is threadwright's domain core: one Slack thread is one durable,
// checkpointed conversation, and this package runs its turns.
//
// It holds the domain types (Key, Message, State, Checkpoint, Input) and the small
// interfaces it uses, each implemented elsewhere (docs/architecture.md, "Packages"):
//
//   - Store and Spool, the checkpoint store: store/sqlite and store/postgres.
//   - Messenger, the way back to the chat: bot (Slack Web API through slack-go).
//   - ScopeChecker, Executor and Synthesizer, the assistant pipeline, and WorkflowAgent,
//     the artifact writer: agents.
//
// Service ties them together (docs/architecture.md, "Data flow of one Slack event"):
// inputs are stored before Slack is acked, each thread's inputs run in order under the
// thread's lease while different threads run concurrently up to a bound, and every turn
// ends in finishTurn: reply, card updates and the save that marks its input done.
//
// Workflow threads are the imperative shell around package conversation/workflow, the
// pure workflow machine (docs/architecture.md, "Layers of conversation"): a workflow
// turn decodes the input (workflow_input.go), applies the machine's transition and the
// agent call the scheduling rule asks for (workflow_steps.go) to a copy of the run,
// renders the cards (cards.go) and saves; auto artifacts run as a pipeline
// (pipeline_run.go, docs/architecture.md "Pipelines").
//
// Packages that implement these interfaces import conversation; conversation imports none
// of them.
package conversation
