package postgres

import (
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/lib/pq"
	"github.com/lib/pq/pqerror"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/internal/sqlstore"
)

// conversationRow, inputRow and workflowRow are the rows the backends share, with
// TIMESTAMPTZ columns scanned as time.Time.
type (
	conversationRow = sqlstore.ConversationRow[time.Time]
	inputRow        = sqlstore.InputRow[time.Time]
	workflowRow     = sqlstore.WorkflowRow[time.Time]
)

// nullMessage is a row of the messages table as Load scans it: every column NULL
// when the conversation has no message to load (the LEFT JOIN found none). Save
// writes messages column by column instead (messageCols).
type nullMessage struct {
	Seq              sql.NullInt64     `db:"seq"`
	CreatedAt        sql.NullTime      `db:"created_at"`
	PromptTokens     sql.NullInt64     `db:"prompt_tokens"`
	CompletionTokens sql.NullInt64     `db:"completion_tokens"`
	Role             sql.NullString    `db:"role"`
	UserID           sql.NullString    `db:"user_id"`
	SlackTS          sql.NullString    `db:"slack_ts"`
	Text             sql.NullString    `db:"text"`
	Meta             sqlstore.JSONText `db:"meta"`
}

// message returns r as a conversation.Message, its time in UTC.
func (r *nullMessage) message() conversation.Message {
	return conversation.Message{
		Seq:              r.Seq.Int64,
		Role:             conversation.Role(r.Role.String),
		UserID:           r.UserID.String,
		Text:             r.Text.String,
		SlackTS:          r.SlackTS.String,
		PromptTokens:     int(r.PromptTokens.Int64),
		CompletionTokens: int(r.CompletionTokens.Int64),
		Meta:             json.RawMessage(r.Meta),
		CreatedAt:        r.CreatedAt.Time.UTC(),
	}
}

// isUniqueViolation reports whether err is PostgreSQL's unique_violation (SQLSTATE 23505).
func isUniqueViolation(err error) bool {
	var e *pq.Error
	return errors.As(err, &e) && e.Code == pqerror.UniqueViolation
}
