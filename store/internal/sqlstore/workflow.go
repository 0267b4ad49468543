package sqlstore

import (
	"database/sql"
	"fmt"

	"github.com/threadwright/threadwright/conversation"
)

// WorkflowColumns returns what Save writes to the conversations columns workflow,
// workflow_status and workflow_started_by for state: its workflow's name, status and
// starter, or three NULLs when it has no workflow. Workflows finds running workflows
// by these columns, so every Save writes them, in the statement that writes state.
func WorkflowColumns(state conversation.State) (name, status, startedBy sql.NullString) {
	w := state.Workflow
	if w == nil {
		return name, status, startedBy
	}
	return sql.NullString{String: w.Name, Valid: true},
		sql.NullString{String: string(w.Status), Valid: true},
		sql.NullString{String: w.StartedBy, Valid: true}
}

// WorkflowRow is a conversation as Workflows reads it, with its timestamp of type T.
type WorkflowRow[T Time] struct {
	TeamID    string `db:"team_id"`
	ChannelID string `db:"channel_id"`
	ThreadTS  string `db:"thread_ts"`
	Name      string `db:"workflow"`
	StartedBy string `db:"workflow_started_by"`
	UpdatedAt T      `db:"updated_at"`
}

// Workflows implements conversation.Store.Workflows: unless limit is not positive (no
// workflows, and no query), query selects into rows the conversations of channelID in
// teamID whose workflow_status is 'running' and, unless startedBy is "", whose
// workflow_started_by is startedBy, most recently updated first (ties: newest id
// first), up to limit; Workflows converts them, their times in UTC.
func Workflows[T Time](teamID, channelID, startedBy string, limit int, query func(rows *[]WorkflowRow[T]) error) ([]conversation.WorkflowRef, error) {
	if limit <= 0 {
		return nil, nil
	}
	var rows []WorkflowRow[T]
	if err := query(&rows); err != nil {
		return nil, fmt.Errorf("list running workflows of %s/%s: %w", teamID, channelID, err)
	}
	refs := make([]conversation.WorkflowRef, len(rows))
	for i, r := range rows {
		refs[i] = conversation.WorkflowRef{
			Key:       conversation.Key{TeamID: r.TeamID, ChannelID: r.ChannelID, ThreadTS: r.ThreadTS},
			Name:      r.Name,
			StartedBy: r.StartedBy,
			UpdatedAt: r.UpdatedAt.UTC(),
		}
	}
	return refs, nil
}
