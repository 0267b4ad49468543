package conversation

import (
	"time"
)

// Metrics observes the Service's turns, its queue of threads waiting for a turn
// slot, its pipelines and workflows (package metrics implements it). Kinds are
// InputKind values; workflows are workflow names.
type Metrics interface {
	// TurnQueued moves the count of threads waiting for a turn slot
	// (Config.MaxConcurrentTurns) by delta.
	TurnQueued(delta int)
	// TurnStarted is told when a turn of an input of kind starts; wait, when not
	// negative, is how long the input waited since it was stored (its first turn).
	TurnStarted(kind string, wait time.Duration)
	// TurnEnded is told when the turn ends, after d, with outcome (TurnOutcome*).
	TurnEnded(kind, outcome string, d time.Duration)
	// PipelineItem is told of an item of a run of workflow that ended ("done",
	// "failed") or was tried again ("retried").
	PipelineItem(workflow, outcome string)
	// WorkflowTransition is told of a change of a run of workflow: "started",
	// "completed", "cancelled", "reopened", or the status an artifact moved to
	// (workflow.ArtifactStatus).
	WorkflowTransition(workflow, event string)
}

// The outcomes of a turn, as Metrics.TurnEnded is told.
const (
	// TurnAnswered: the input was finished as it should be (an answer, a workflow
	// step, a command).
	TurnAnswered = "answered"
	// TurnStopped: a Stop button or a newer message stopped it.
	TurnStopped = "stopped"
	// TurnFailed: it ended with an error reply, was given up, or left its input
	// pending to be tried again after an error; or its input's stored payload did not
	// decode, and the input was failed as it began (conversation.UndecodableError).
	TurnFailed = "failed"
	// TurnTimedOut: it ran out of Config.TurnTimeout.
	TurnTimedOut = "timed_out"
	// TurnDropped: its input was not for the bot after all.
	TurnDropped = "dropped"
	// TurnAbandoned: the lease was lost or the service shut down; the input stays
	// pending for the next worker.
	TurnAbandoned = "abandoned"
	// TurnOverBudget: it was refused, before any model call, because the person or
	// the channel reached a token budget (conversation/service/budget.go).
	TurnOverBudget = "over_budget"
)
