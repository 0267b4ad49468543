package sqlstore

import (
	"bytes"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"time"

	"github.com/threadwright/threadwright/conversation"
)

// Now returns the current time as the stores store it: UTC, whole microseconds
// (TIMESTAMPTZ's precision, and the unit of SQLite's INTEGER timestamps).
func Now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// Time is the Go type of a backend's timestamp columns, which a row type scans them
// into: time.Time itself for PostgreSQL's TIMESTAMPTZ, or a type defined on time.Time
// that implements driver.Valuer and sql.Scanner for the backend's storage (SQLite's
// INTEGER Unix microseconds) and, as time.Time does, UTC.
type Time interface {
	// UTC returns the time as a time.Time in UTC.
	UTC() time.Time
}

// JSONText is a JSON column (a TEXT column in SQLite, JSONB in PostgreSQL): bound as
// text, and NULL when empty. A []byte would not do: SQLite stores it as a BLOB, and
// lib/pq sends it as bytea or, with binary_parameters, in binary format, which is not
// JSONB's.
type JSONText []byte

// Value implements driver.Valuer.
func (j JSONText) Value() (driver.Value, error) {
	if len(j) == 0 {
		return nil, nil
	}
	return string(j), nil
}

// Scan implements sql.Scanner.
func (j *JSONText) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*j = nil
	case string:
		*j = JSONText(v)
	case []byte:
		*j = bytes.Clone(v)
	default:
		return fmt.Errorf("scan JSON: got %T, want text", src)
	}
	return nil
}

// ConversationRow is a row of the conversations table, with its timestamps of type T.
type ConversationRow[T Time] struct {
	ID        int64    `db:"id"`
	TeamID    string   `db:"team_id"`
	ChannelID string   `db:"channel_id"`
	ThreadTS  string   `db:"thread_ts"`
	State     JSONText `db:"state"`
	Version   int64    `db:"version"`
	LastSeq   int64    `db:"last_seq"`
	CreatedAt T        `db:"created_at"`
	UpdatedAt T        `db:"updated_at"`
}

// Conversation returns r as a conversation.Conversation, its times in UTC. Its error
// ("decode state: …") says the state is not JSON; the conversation is returned anyway.
func (r ConversationRow[T]) Conversation() (conversation.Conversation, error) {
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

// InputRow is a row of the inputs table as Begin reads it (the columns of
// conversation.Input), with its timestamp of type T.
type InputRow[T Time] struct {
	ID        string   `db:"id"`
	EventID   string   `db:"event_id"`
	TeamID    string   `db:"team_id"`
	ChannelID string   `db:"channel_id"`
	ThreadTS  string   `db:"thread_ts"`
	Kind      string   `db:"kind"`
	Payload   JSONText `db:"payload"`
	Status    string   `db:"status"`
	Attempts  int      `db:"attempts"`
	Seq       int64    `db:"seq"`
	CreatedAt T        `db:"created_at"`
}

// Input returns r as a conversation.Input, its time in UTC and its payload decoded by
// kind into Message, Action, Command or Thread (nil when there is none). Its error, a
// *conversation.UndecodableError, says the payload does not decode; the input is
// returned anyway, without its payload.
func (r InputRow[T]) Input() (conversation.Input, error) {
	in := conversation.Input{
		ID:        r.ID,
		EventID:   r.EventID,
		Key:       conversation.Key{TeamID: r.TeamID, ChannelID: r.ChannelID, ThreadTS: r.ThreadTS},
		Kind:      conversation.InputKind(r.Kind),
		Status:    conversation.InputStatus(r.Status),
		Attempts:  r.Attempts,
		Seq:       r.Seq,
		CreatedAt: r.CreatedAt.UTC(),
	}
	if len(r.Payload) == 0 {
		return in, nil
	}
	var dst any
	switch in.Kind {
	case conversation.KindAction:
		in.Action = new(conversation.ActionInput)
		dst = in.Action
	case conversation.KindCommand:
		in.Command = new(conversation.CommandInput)
		dst = in.Command
	case conversation.KindAssistantThread:
		in.Thread = new(conversation.AssistantThreadInput)
		dst = in.Thread
	default:
		in.Message = new(conversation.UserMessage)
		dst = in.Message
	}
	if err := json.Unmarshal(r.Payload, dst); err != nil {
		in.Message, in.Action, in.Command, in.Thread = nil, nil, nil, nil
		return in, &conversation.UndecodableError{Input: in, Err: err}
	}
	return in, nil
}

// Inputs returns rows as conversation.Inputs (InputRow.Input), up to the first whose
// payload does not decode (Store.Pending: a burst ends there; the input's own turn
// fails it).
func Inputs[T Time](rows []InputRow[T]) []conversation.Input {
	out := make([]conversation.Input, 0, len(rows))
	for _, r := range rows {
		in, err := r.Input()
		if err != nil {
			break
		}
		out = append(out, in)
	}
	return out
}
