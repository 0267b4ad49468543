package sqlite

import (
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/internal/sqlstore"
)

// timestamp is a time stored as INTEGER Unix microseconds: compact, and ordered as
// numbers.
type timestamp time.Time

// Value implements driver.Valuer.
func (t timestamp) Value() (driver.Value, error) { return time.Time(t).UnixMicro(), nil }

// Scan implements sql.Scanner.
func (t *timestamp) Scan(src any) error {
	n, ok := src.(int64)
	if !ok {
		return fmt.Errorf("scan timestamp: got %T, want int64", src)
	}
	*t = timestamp(time.UnixMicro(n).UTC())
	return nil
}

// UTC returns t as a time.Time in UTC (sqlstore.Time).
func (t timestamp) UTC() time.Time { return time.Time(t).UTC() }

// conversationRow, inputRow and workflowRow are the rows the backends share, with
// SQLite's timestamps.
type (
	conversationRow = sqlstore.ConversationRow[timestamp]
	inputRow        = sqlstore.InputRow[timestamp]
	workflowRow     = sqlstore.WorkflowRow[timestamp]
)

// messageRow is a row of the messages table, as Load reads it (all but
// ConversationID) and Save writes it.
type messageRow struct {
	ConversationID   int64             `db:"conversation_id"`
	Seq              int64             `db:"seq"`
	Role             string            `db:"role"`
	UserID           string            `db:"user_id"`
	Text             string            `db:"text"`
	SlackTS          string            `db:"slack_ts"`
	PromptTokens     int               `db:"prompt_tokens"`
	CompletionTokens int               `db:"completion_tokens"`
	Meta             sqlstore.JSONText `db:"meta"`
	CreatedAt        timestamp         `db:"created_at"`
}

// newMessageRow returns m as the row Save inserts: message seq of conversation id,
// created at at.
func newMessageRow(id, seq int64, m conversation.Message, at time.Time) messageRow {
	return messageRow{
		ConversationID:   id,
		Seq:              seq,
		Role:             string(m.Role),
		UserID:           m.UserID,
		Text:             m.Text,
		SlackTS:          m.SlackTS,
		PromptTokens:     m.PromptTokens,
		CompletionTokens: m.CompletionTokens,
		Meta:             sqlstore.JSONText(m.Meta),
		CreatedAt:        timestamp(at),
	}
}

// message returns r as a conversation.Message, its time in UTC.
func (r messageRow) message() conversation.Message {
	return conversation.Message{
		Seq:              r.Seq,
		Role:             conversation.Role(r.Role),
		UserID:           r.UserID,
		Text:             r.Text,
		SlackTS:          r.SlackTS,
		PromptTokens:     r.PromptTokens,
		CompletionTokens: r.CompletionTokens,
		Meta:             json.RawMessage(r.Meta),
		CreatedAt:        time.Time(r.CreatedAt),
	}
}

// isUniqueViolation reports whether err is SQLite's UNIQUE constraint failure
// (SQLITE_CONSTRAINT_UNIQUE).
func isUniqueViolation(err error) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && e.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE
}

// classify returns err marked with conversation.ErrUnavailable when it may go away
// when retried (transient); every method of the store returns its errors through it.
func classify(err error) error { return sqlstore.Unavailable(err, transient) }

// transient reports whether err is SQLITE_BUSY or SQLITE_LOCKED (any of their
// extended codes): another connection, of this process or another, held a lock on
// the file longer than the busy timeout, or a snapshot moved under a transaction.
// Running the statement again may succeed.
func transient(err error) bool {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.Code() & 0xff { // the primary result code
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return true
	}
	return false
}
