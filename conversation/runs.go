package conversation

import (
	"time"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// RunQuery selects the workflow runs a RunLister lists (the HTTP API's GET /v1/runs).
type RunQuery struct {
	// TeamID is the workspace (required).
	TeamID string
	// ChannelID, when set, keeps the runs of that channel only.
	ChannelID string
	// Status, when set, keeps the runs in that status.
	Status workflow.RunStatus
	// Limit bounds the runs returned (at least 1).
	Limit int
}

// RunRef is a conversation that has a workflow run, as a RunLister lists it.
type RunRef struct {
	Key       Key
	Workflow  string
	Status    workflow.RunStatus
	StartedBy string
	UpdatedAt time.Time
}

// APIActorPrefix starts the actor id of an HTTP API token ("api:ci-bot"), which the
// workflow machine takes as a person's Slack user id: it is the starter of the runs
// the token starts, the author of its revisions, and may be listed among the
// approvers (APPROVER_USER_IDS).
const APIActorPrefix = "api:"

// SourceAPI is the door of a command given by the HTTP API (POST /v1/runs starts a
// workflow as /threadwright start does in the channel).
const SourceAPI CommandSource = "api"
