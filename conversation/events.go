package conversation

import (
	"encoding/json"
	"time"
)

// The webhook event types (docs/api.md, "Webhooks"). A turn's save derives them from how
// the thread's workflow state changed (workflowEvents) and writes them to the store's
// outbox in the same transaction (Turn.Events), so a crash neither loses nor invents
// one; package webhook delivers them.
const (
	// EventRunStarted: a workflow run began in the thread.
	EventRunStarted = "run.started"
	// EventArtifactGenerated: an artifact's text was written (or rewritten) and waits
	// for review; for an auto artifact, its text was written (it is approved too).
	EventArtifactGenerated = "artifact.generated"
	// EventArtifactApproved: an artifact was approved (by a person, or by the pipeline
	// for an auto artifact).
	EventArtifactApproved = "artifact.approved"
	// EventArtifactStale: an artifact it depends on changed after it was written.
	EventArtifactStale = "artifact.stale"
	// EventRunCompleted: every artifact is approved and the report is out.
	EventRunCompleted = "run.completed"
	// EventRunFailed: the run was cancelled (reason "cancelled"), or one of its steps
	// failed and was rolled back, waiting for Retry (reason "step_failed").
	EventRunFailed = "run.failed"
)

// Event is one webhook event as the outbox keeps it (migration 00009): Data is what
// the receiver gets, apart from the permalink, which the deliverer adds when it knows
// it. Seq orders all events (increasing across threads and replicas, assigned by
// Store.Save); a thread's events are delivered in Seq order.
type Event struct {
	// Seq is assigned by the store (0 before Save).
	Seq int64
	// Key is the thread of the run.
	Key  Key
	Data EventData
	// Attempts counts the deliveries tried so far; LastError is the last one's error
	// ("" before any failed).
	Attempts  int
	LastError string
}

// EventData is the JSON body of a webhook event (docs/api.md, "Webhooks").
type EventData struct {
	// ID is unique and stays the same across retries: receivers deduplicate on it.
	// "evt_" and 26 random base32 characters.
	ID string `json:"id"`
	// Type is one of the Event* constants.
	Type string `json:"type"`
	// Time is when the checkpoint that produced the event was saved (RFC 3339, UTC).
	Time     time.Time      `json:"time"`
	Run      EventRun       `json:"run"`
	Artifact *EventArtifact `json:"artifact,omitempty"`
	// Actor is who caused the event; nil for the bot's own work (the pipeline).
	Actor *EventActor `json:"actor,omitempty"`
	// Reason says why a run.failed run failed: "cancelled" or "step_failed".
	Reason string `json:"reason,omitempty"`
}

// EventRun names the run of an event: its workflow and Slack thread.
type EventRun struct {
	Workflow string `json:"workflow"`
	TeamID   string `json:"team_id"`
	Channel  string `json:"channel"`
	ThreadTS string `json:"thread_ts"`
	// Status is the run's status after the event (workflow.RunStatus).
	Status string `json:"status"`
	// Permalink is the thread's Slack link (chat.getPermalink), when the deliverer
	// could get it.
	Permalink string `json:"permalink,omitempty"`
}

// EventArtifact is the artifact of an artifact.* event, as the event left it.
type EventArtifact struct {
	ID string `json:"id"`
	// Revision is the artifact's Rev: buttons and the API act on it.
	Revision int    `json:"revision"`
	Status   string `json:"status"`
}

// EventActor is who caused an event: a Slack user id (U…).
type EventActor struct {
	UserID string `json:"user_id"`
}

// MarshalJSON keeps Time in UTC to the microsecond, as the store keeps it.
func (d EventData) MarshalJSON() ([]byte, error) {
	type plain EventData
	p := plain(d)
	p.Time = p.Time.UTC().Truncate(time.Microsecond)
	return json.Marshal(p)
}
