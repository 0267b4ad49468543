// Package workflowrun is the imperative shell around the pure workflow machine
// (package conversation/workflow; docs/architecture.md, "Workflow machine"): it runs
// the turns of artifact workflows in a thread.
//
// A turn (turn.go) decodes its input (input.go, reply.go, modal.go, command.go,
// channel.go), applies the machine's transitions and the agent calls the scheduling
// rule asks for to a copy of the run (steps.go; the model's writes and verdicts in
// selfreview.go, enhance.go, verdict.go), then shows what changed (cards.go, from
// package render) and saves through turns.Run. A step that fails leaves the run as it
// was, with Retry.
//
// Auto artifacts run as a pipeline (pipeline*.go; docs/architecture.md, "Pipelines"):
// items written a few at once, checkpointed one by one, giving way to people's
// inputs. events.go derives webhook events from a run's change, metrics.go its
// instruments.
package workflowrun
