package postgres

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

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
	UpdatedAt time.Time `db:"updated_at"`
}

// Runs lists the conversations of q.TeamID that have a workflow run, filtered by
// q.ChannelID and q.Status when set, most recently updated first, at most q.Limit.
func (s *APIQueries) Runs(ctx context.Context, q conversation.RunQuery) ([]conversation.RunRef, error) {
	if q.Limit <= 0 {
		return nil, nil
	}
	var rows []runRow
	err := s.db.SelectContext(ctx, &rows, `
		SELECT team_id, channel_id, thread_ts, workflow, workflow_status, workflow_started_by, updated_at
		FROM conversations
		WHERE team_id = $1::text AND workflow IS NOT NULL AND workflow <> ''
			AND ($2::text = '' OR channel_id = $2::text) AND ($3::text = '' OR workflow_status = $3::text)
		ORDER BY updated_at DESC, id DESC LIMIT $4`,
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

// apiMessageRow is a row of the messages table as Messages reads it.
type apiMessageRow struct {
	Seq              int64             `db:"seq"`
	Role             string            `db:"role"`
	UserID           string            `db:"user_id"`
	Text             string            `db:"text"`
	SlackTS          string            `db:"slack_ts"`
	PromptTokens     int               `db:"prompt_tokens"`
	CompletionTokens int               `db:"completion_tokens"`
	Meta             sqlstore.JSONText `db:"meta"`
	CreatedAt        time.Time         `db:"created_at"`
}

// Messages returns up to limit messages of conversation key whose seq is below
// before (0: the newest), oldest first, only those of role when it is not "".
// Errors: conversation.ErrNotFound when the conversation does not exist.
func (s *APIQueries) Messages(ctx context.Context, key conversation.Key, before int64, limit int, role conversation.Role) ([]conversation.Message, error) {
	var id int64
	err := s.db.QueryRowContext(ctx, `SELECT id FROM conversations WHERE team_id = $1::text AND channel_id = $2::text AND thread_ts = $3::text`,
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
	var rows []apiMessageRow
	err = s.db.SelectContext(ctx, &rows, `
		SELECT seq, role, user_id, text, slack_ts, prompt_tokens, completion_tokens, meta, created_at
		FROM messages WHERE conversation_id = $1 AND ($2::bigint <= 0 OR seq < $2::bigint) AND ($3::text = '' OR role = $3::text)
		ORDER BY seq DESC LIMIT $4`, id, before, string(role), limit)
	if err != nil {
		return nil, classify(fmt.Errorf("messages of %s: %w", key, err))
	}
	out := make([]conversation.Message, len(rows))
	for i, r := range rows {
		out[len(rows)-1-i] = conversation.Message{
			Seq: r.Seq, Role: conversation.Role(r.Role), UserID: r.UserID, Text: r.Text, SlackTS: r.SlackTS,
			PromptTokens: r.PromptTokens, CompletionTokens: r.CompletionTokens, Meta: json.RawMessage(r.Meta), CreatedAt: r.CreatedAt.UTC(),
		}
	}
	return out, nil
}

// Input returns input id as stored: its key, kind, status and payload (a start's
// command line and inputs, for the HTTP API's Idempotency-Key). Errors:
// conversation.ErrNotFound; a *conversation.UndecodableError, with the input without
// its payload, when the payload does not decode.
func (s *APIQueries) Input(ctx context.Context, id string) (conversation.Input, error) {
	var row inputRow
	err := s.db.GetContext(ctx, &row, `
		SELECT id, event_id, team_id, channel_id, thread_ts, kind, payload, status, attempts, seq, created_at
		FROM inputs WHERE id = $1::text`, id)
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
	rows, err := s.db.QueryContext(ctx, `
		SELECT team_id, channel_id, thread_ts FROM inputs WHERE id > $1::text AND id < $2::text ORDER BY created_at, id`,
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
