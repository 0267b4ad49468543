package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
	"github.com/threadwright/threadwright/store/internal/sqlstore"
)

// APIQueries are what the HTTP API reads besides Load (api.Store): the workflow
// runs, a thread's messages, an input's status and the inputs forwarded from it.
type APIQueries struct{ *pool }

// runRow is a conversation as Runs reads it.
type runRow struct {
	TeamID    string    `db:"team_id"`
	ChannelID string    `db:"channel_id"`
	ThreadTS  string    `db:"thread_ts"`
	Name      string    `db:"workflow"`
	Status    string    `db:"workflow_status"`
	StartedBy string    `db:"workflow_started_by"`
	UpdatedAt timestamp `db:"updated_at"`
}

// Runs lists the conversations of q.TeamID that have a workflow run, filtered by
// q.ChannelID and q.Status when set, most recently updated first, at most q.Limit.
func (s *APIQueries) Runs(ctx context.Context, q conversation.RunQuery) ([]conversation.RunRef, error) {
	if q.Limit <= 0 {
		return nil, nil
	}
	var rows []runRow
	err := s.read.SelectContext(ctx, &rows, `
		SELECT team_id, channel_id, thread_ts, workflow, workflow_status, workflow_started_by, updated_at
		FROM conversations
		WHERE team_id = ?1 AND workflow IS NOT NULL AND workflow <> ''
			AND (?2 = '' OR channel_id = ?2) AND (?3 = '' OR workflow_status = ?3)
		ORDER BY updated_at DESC, id DESC LIMIT ?4`,
		q.TeamID, q.ChannelID, string(q.Status), q.Limit)
	if err != nil {
		return nil, classify(fmt.Errorf("list runs of %s: %w", q.TeamID, err))
	}
	refs := make([]conversation.RunRef, len(rows))
	for i, r := range rows {
		refs[i] = conversation.RunRef{
			Key:      conversation.Key{TeamID: r.TeamID, ChannelID: r.ChannelID, ThreadTS: r.ThreadTS},
			Workflow: r.Name, Status: workflow.RunStatus(r.Status), StartedBy: r.StartedBy, UpdatedAt: r.UpdatedAt.UTC(),
		}
	}
	return refs, nil
}

// Messages returns up to limit messages of conversation key whose seq is below
// before (0: the newest), oldest first, only those of role when it is not "".
// Errors: conversation.ErrNotFound when the conversation does not exist.
func (s *APIQueries) Messages(ctx context.Context, key conversation.Key, before int64, limit int, role conversation.Role) ([]conversation.Message, error) {
	var id int64
	err := s.read.QueryRowContext(ctx, `SELECT id FROM conversations WHERE team_id = ?1 AND channel_id = ?2 AND thread_ts = ?3`,
		key.TeamID, key.ChannelID, key.ThreadTS).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, conversation.ErrNotFound
	}
	if err != nil {
		return nil, classify(fmt.Errorf("messages of %s: %w", key, err))
	}
	if limit <= 0 {
		return nil, nil
	}
	var rows []messageRow
	err = s.read.SelectContext(ctx, &rows, `
		SELECT conversation_id, seq, role, user_id, text, slack_ts, prompt_tokens, completion_tokens, meta, created_at
		FROM messages WHERE conversation_id = ?1 AND (?2 <= 0 OR seq < ?2) AND (?3 = '' OR role = ?3)
		ORDER BY seq DESC LIMIT ?4`, id, before, string(role), limit)
	if err != nil {
		return nil, classify(fmt.Errorf("messages of %s: %w", key, err))
	}
	out := make([]conversation.Message, len(rows))
	for i, r := range rows {
		out[len(rows)-1-i] = r.message()
	}
	return out, nil
}

// Input returns input id as stored: its key, kind, status and payload (a start's
// command line and inputs, for the HTTP API's Idempotency-Key). Errors:
// conversation.ErrNotFound; a *conversation.UndecodableError, with the input without
// its payload, when the payload does not decode.
func (s *APIQueries) Input(ctx context.Context, id string) (conversation.Input, error) {
	var row inputRow
	err := s.read.GetContext(ctx, &row, `
		SELECT id, event_id, team_id, channel_id, thread_ts, kind, payload, status, attempts, seq, created_at
		FROM inputs WHERE id = ?1`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return conversation.Input{}, conversation.ErrNotFound
	}
	if err != nil {
		return conversation.Input{}, classify(fmt.Errorf("look up input %s: %w", id, err))
	}
	return row.Input()
}

// Forwarded returns the threads of the inputs forwarded from input id (whose ids
// are id + ">" + thread_ts: a channel command's forward to its thread), oldest first.
func (s *APIQueries) Forwarded(ctx context.Context, id string) ([]conversation.Key, error) {
	rows, err := s.read.QueryContext(ctx, `
		SELECT team_id, channel_id, thread_ts FROM inputs WHERE id > ?1 AND id < ?2 ORDER BY created_at, id`,
		id+">", id+"?")
	if err != nil {
		return nil, classify(fmt.Errorf("inputs forwarded from %s: %w", id, err))
	}
	keys, err := sqlstore.ScanKeys(rows)
	if err != nil {
		return nil, classify(fmt.Errorf("inputs forwarded from %s: %w", id, err))
	}
	return keys, nil
}
