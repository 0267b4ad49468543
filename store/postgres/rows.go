package postgres

import (
	"bytes"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/lib/pq"
	"github.com/lib/pq/pqerror"

	"github.com/threadwright/threadwright/conversation"
)

// now returns the current time as stored: UTC, whole microseconds (timestamptz's
// precision).
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// jsonText is a JSONB column: bound as text, and NULL when empty. (lib/pq sends a
// []byte as bytea, or, with binary_parameters, in binary format, which is not JSONB's.)
type jsonText []byte

// Value implements driver.Valuer.
func (j jsonText) Value() (driver.Value, error) {
	if len(j) == 0 {
		return nil, nil
	}
	return string(j), nil
}

// Scan implements sql.Scanner.
func (j *jsonText) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*j = nil
	case string:
		*j = jsonText(v)
	case []byte:
		*j = bytes.Clone(v)
	default:
		return fmt.Errorf("scan JSON: got %T, want text", src)
	}
	return nil
}

type conversationRow struct {
	ID        int64     `db:"id"`
	TeamID    string    `db:"team_id"`
	ChannelID string    `db:"channel_id"`
	ThreadTS  string    `db:"thread_ts"`
	State     jsonText  `db:"state"`
	Version   int64     `db:"version"`
	LastSeq   int64     `db:"last_seq"`
	CreatedAt time.Time `db:"created_at"`
	UpdatedAt time.Time `db:"updated_at"`
}

func (r conversationRow) conversation() (conversation.Conversation, error) {
	c := conversation.Conversation{
		ID:        r.ID,
		Key:       conversation.Key{TeamID: r.TeamID, ChannelID: r.ChannelID, ThreadTS: r.ThreadTS},
		Version:   r.Version,
		LastSeq:   r.LastSeq,
		CreatedAt: r.CreatedAt.UTC(),
		UpdatedAt: r.UpdatedAt.UTC(),
	}
	if err := json.Unmarshal(r.State, &c.State); err != nil {
		return c, fmt.Errorf("decode state: %w", err)
	}
	return c, nil
}

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
	Meta             jsonText
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

type inputRow struct {
	ID        string    `db:"id"`
	EventID   string    `db:"event_id"`
	TeamID    string    `db:"team_id"`
	ChannelID string    `db:"channel_id"`
	ThreadTS  string    `db:"thread_ts"`
	Kind      string    `db:"kind"`
	Payload   jsonText  `db:"payload"`
	Status    string    `db:"status"`
	Attempts  int       `db:"attempts"`
	CreatedAt time.Time `db:"created_at"`
}

func (r inputRow) input() (conversation.Input, error) {
	in := conversation.Input{
		ID:        r.ID,
		EventID:   r.EventID,
		Key:       conversation.Key{TeamID: r.TeamID, ChannelID: r.ChannelID, ThreadTS: r.ThreadTS},
		Kind:      conversation.InputKind(r.Kind),
		Status:    conversation.InputStatus(r.Status),
		Attempts:  r.Attempts,
		CreatedAt: r.CreatedAt.UTC(),
	}
	if len(r.Payload) > 0 {
		in.Message = new(conversation.UserMessage)
		if err := json.Unmarshal(r.Payload, in.Message); err != nil {
			return in, fmt.Errorf("decode input %s: %w", r.ID, err)
		}
	}
	return in, nil
}

// isUniqueViolation reports whether err is PostgreSQL's unique_violation (SQLSTATE 23505).
func isUniqueViolation(err error) bool {
	var e *pq.Error
	return errors.As(err, &e) && e.Code == pqerror.UniqueViolation
}
