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

// nullMessage is a message as Load scans it: every column NULL when the conversation
// has no message to load (the LEFT JOIN found none).
type nullMessage struct {
	Seq              sql.NullInt64
	CreatedAt        sql.NullTime
	PromptTokens     sql.NullInt64
	CompletionTokens sql.NullInt64
	Role             sql.NullString
	UserID           sql.NullString
	SlackTS          sql.NullString
	Text             sql.NullString
	Meta             sqlstore.JSONText
}

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
