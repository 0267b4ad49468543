// Package conversation is threadwright's domain core: one Slack thread is one durable,
// checkpointed conversation, and this package runs its turns.
//
// It holds the domain types (Key, Message, State, Checkpoint, Input) and the small
// interfaces it uses, each implemented elsewhere (DESIGN.md, "Layout"):
//
//   - Store, the checkpoint store: store/sqlite and store/postgres.
//   - Messenger, the way back to the chat: bot (Slack Web API through slack-go).
//   - ScopeChecker, Executor and Synthesizer, the assistant pipeline: agents.
//
// Service ties them together (DESIGN.md, "Data flow of one Slack event"): inputs are
// deduplicated and persisted through the Store before they run, queued per thread so one
// thread's inputs run strictly in order while different threads run concurrently up to a
// bound, and each turn loads the checkpoint, runs scope check → executor → synthesizer,
// posts the reply and saves the checkpoint with an optimistic version check.
//
// Workflow threads run the artifact workflows of package conversation/workflow
// (engine.go): choice and draft artifacts wait for people's buttons and replies; auto
// artifacts run as a pipeline (pipeline.go). A pipeline is a series of KindPipeline
// inputs of the thread, saved with the state that asks for them (Turn.Enqueue): each
// runs items concurrently up to Config.PipelineConcurrency, checkpoints every finished
// item, gives way to people's inputs, and can be stopped and continued from its
// progress message.
//
// Packages that implement these interfaces import conversation; conversation imports none
// of them.
package conversation
