package workflowrun

import (
	"crypto/rand"
	"slices"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// newEventID returns a new event id: "evt_" and 26 random base32 characters.
func newEventID() string { return "evt_" + rand.Text() }

// workflowEvents returns the events of the change of key's workflow state from prev
// (as last saved; nil for none) to next, caused by actor ("" for the bot), at now, in
// the order they happened: run.started, then per artifact in the definition's order
// (def nil: by id) artifact.stale, artifact.generated, artifact.approved, then
// run.completed or run.failed.
func workflowEvents(def *workflow.Definition, key conversation.Key, prev, next *workflow.State, prevRetry, nextRetry *conversation.Input, actor string, now time.Time) []conversation.Event {
	if next == nil {
		return nil
	}
	run := conversation.EventRun{Workflow: next.Name, TeamID: key.TeamID, Channel: key.ChannelID, ThreadTS: key.ThreadTS, Status: string(next.Status)}
	var who *conversation.EventActor
	if actor != "" {
		who = &conversation.EventActor{UserID: actor}
	}
	var out []conversation.Event
	add := func(typ string, art *conversation.EventArtifact, reason string) {
		out = append(out, conversation.Event{Key: key, Data: conversation.EventData{ID: newEventID(), Type: typ, Time: now, Run: run, Artifact: art, Actor: who, Reason: reason}})
	}
	if prev == nil || prev.Name != next.Name {
		prev = nil
		add(conversation.EventRunStarted, nil, "")
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
		art := &conversation.EventArtifact{ID: id, Revision: a.Rev, Status: string(a.Status)}
		switch {
		case a.Status == workflow.StatusStale && was.Status != workflow.StatusStale:
			add(conversation.EventArtifactStale, art, "")
		case a.Status == workflow.StatusGenerated && (was.Status != workflow.StatusGenerated || was.Rev != a.Rev || was.Text != a.Text):
			add(conversation.EventArtifactGenerated, art, "")
		case a.Status == workflow.StatusApproved && was.Status != workflow.StatusApproved:
			if was.Status == workflow.StatusRunning || (was.Status != workflow.StatusGenerated && was.Text != a.Text) {
				// Written and approved in one step (an auto artifact).
				add(conversation.EventArtifactGenerated, art, "")
			}
			add(conversation.EventArtifactApproved, art, "")
		}
	}
	switch {
	case next.Status == workflow.RunCompleted && (prev == nil || prev.Status != workflow.RunCompleted):
		add(conversation.EventRunCompleted, nil, "")
	case next.Status == workflow.RunCancelled && (prev == nil || prev.Status != workflow.RunCancelled):
		add(conversation.EventRunFailed, nil, "cancelled")
	case nextRetry != nil && (prevRetry == nil || prevRetry.ID != nextRetry.ID):
		add(conversation.EventRunFailed, nil, "step_failed")
	}
	return out
}

// Events returns the webhook events of a save of a thread whose state
// changed from prev to next (workflowEvents), with the workflows' definitions.
func Events(workflows conversation.Workflows) func(key conversation.Key, prev, next conversation.State, actor string, now time.Time) []conversation.Event {
	return func(key conversation.Key, prev, next conversation.State, actor string, now time.Time) []conversation.Event {
		if next.Workflow == nil {
			return nil
		}
		def, _ := workflows.Get(next.Workflow.Name)
		return workflowEvents(def, key, prev.Workflow, next.Workflow, prev.Retry, next.Retry, actor, now)
	}
}
