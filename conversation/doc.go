// Package conversation is threadwright's domain: one Slack thread is one durable,
// checkpointed conversation. This package holds its types and the interfaces the
// rest of the program meets at; nothing in it runs (docs/architecture.md, "Packages").
//
//   - The conversation: its Key and Message (key.go); State, Conversation,
//     Checkpoint, Turn (conversation.go); what drives it (input.go): Input and its
//     kinds; a thread's Lease (lease.go).
//   - What a turn talks to, each implemented by an adapter: Store and Spool
//     (store.go; store/sqlite, store/postgres), Messenger (messenger.go; bot), the
//     assistant pipeline's ScopeChecker, Executor and Synthesizer (agent.go; agents),
//     the WorkflowAgent and SourceFetcher (artifacts.go; agents), Knowledge
//     (knowledge.go; the stores).
//   - What people see, as data: Card, Block, Button, Modal and the Action a button
//     carries (ui.go); the thinking steps of an answer (tasks.go).
//   - The records a turn leaves: usage (usage.go), feedback (feedback.go), webhook
//     events (events.go), and what a failure came from (failure.go).
//
// Packages that implement these interfaces import conversation; conversation imports
// none of them, and none of the packages that run conversations.
package conversation
