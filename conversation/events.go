package conversation

import (
	"crypto/rand"
	"encoding/json"
	"slices"
	"time"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// The webhook event types (README, "Webhooks"). A turn's save derives them from how
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

// EventData is the JSON body of a webhook event (README, "Webhooks").
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

// newEventID returns a new event id: "evt_" and 26 random base32 characters.
func newEventID() string { return "evt_" + rand.Text() }

// workflowEvents returns the events of the change of key's workflow state from prev
// (as last saved; nil for none) to next, caused by actor ("" for the bot), at now, in
// the order they happened: run.started, then per artifact in the definition's order
// (def nil: by id) artifact.stale, artifact.generated, artifact.approved, then
// run.completed or run.failed.
func workflowEvents(def *workflow.Definition, key Key, prev, next *workflow.State, prevRetry, nextRetry *Input, actor string, now time.Time) []Event {
	if next == nil {
		return nil
	}
	run := EventRun{Workflow: next.Name, TeamID: key.TeamID, Channel: key.ChannelID, ThreadTS: key.ThreadTS, Status: string(next.Status)}
	var who *EventActor
	if actor != "" {
		who = &EventActor{UserID: actor}
	}
	var out []Event
	add := func(typ string, art *EventArtifact, reason string) {
		out = append(out, Event{Key: key, Data: EventData{ID: newEventID(), Type: typ, Time: now, Run: run, Artifact: art, Actor: who, Reason: reason}})
	}
	if prev == nil || prev.Name != next.Name {
		prev = nil
		add(EventRunStarted, nil, "")
	}
	var ids []string
	if def != nil {
		for _, a := range def.Artifacts {
			ids = append(ids, a.ID)
		}
	}
	for id := range next.Artifacts {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	if def == nil {
		slices.Sort(ids)
	}
	for _, id := range ids {
		a := next.Artifacts[id]
		if a == nil {
			continue
		}
		var was workflow.ArtifactState
		if prev != nil && prev.Artifacts[id] != nil {
			was = *prev.Artifacts[id]
		}
		art := &EventArtifact{ID: id, Revision: a.Rev, Status: string(a.Status)}
		switch {
		case a.Status == workflow.StatusStale && was.Status != workflow.StatusStale:
			add(EventArtifactStale, art, "")
		case a.Status == workflow.StatusGenerated && (was.Status != workflow.StatusGenerated || was.Rev != a.Rev || was.Text != a.Text):
			add(EventArtifactGenerated, art, "")
		case a.Status == workflow.StatusApproved && was.Status != workflow.StatusApproved:
			if was.Status == workflow.StatusRunning || (was.Status != workflow.StatusGenerated && was.Text != a.Text) {
				// Written and approved in one step (an auto artifact).
				add(EventArtifactGenerated, art, "")
			}
			add(EventArtifactApproved, art, "")
		}
	}
	switch {
	case next.Status == workflow.RunCompleted && (prev == nil || prev.Status != workflow.RunCompleted):
		add(EventRunCompleted, nil, "")
	case next.Status == workflow.RunCancelled && (prev == nil || prev.Status != workflow.RunCancelled):
		add(EventRunFailed, nil, "cancelled")
	case nextRetry != nil && (prevRetry == nil || prevRetry.ID != nextRetry.ID):
		add(EventRunFailed, nil, "step_failed")
	}
	return out
}

// savedState is what webhook events are derived from: a thread's workflow state and
// failed step (State.Retry) as stored.
type savedState struct {
	wf    *workflow.State
	retry *Input
}

// snapshot copies what st's events depend on, so that later changes of st do not
// change it.
func snapshot(st State) savedState {
	return savedState{wf: st.Workflow.Clone(), retry: st.Retry}
}

// turnEvents returns the webhook events of saving turn after r's last load or save
// (none unless Config.WebhookEvents).
func (s *Service) turnEvents(r *run, turn Turn) []Event {
	if !s.cfg.WebhookEvents || turn.State.Workflow == nil {
		return nil
	}
	var def *workflow.Definition
	if s.cfg.Workflows != nil {
		def, _ = s.cfg.Workflows.Get(turn.State.Workflow.Name)
	}
	return workflowEvents(def, turn.Key, r.saved.wf, turn.State.Workflow, r.saved.retry, turn.State.Retry, r.in.User(), s.cfg.Now())
}
