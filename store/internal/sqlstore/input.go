package sqlstore

import (
	"cmp"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/threadwright/threadwright/conversation"
)

// The input methods of conversation.Store, less their SQL: a backend's method passes
// its statements as functions and returns what the function here returns. Each
// statement runs at most once, and its errors come back wrapped with the input's id.

// NewInput is an input as Enqueue has a backend insert it: its columns, made
// storable (Text, JSON).
type NewInput struct {
	ID, EventID string
	Key         conversation.Key
	Kind        string
	// Payload is what the input carries as JSON (see payloadOf); nil for nothing.
	Payload JSONText
	// Created is the input's creation time; Now the time of the insert.
	Created, Now time.Time
	// Message is true for a conversation.KindUserMessage, whose author is MessageBy
	// (its Slack user id): the holder of the thread's lease is told of it.
	Message   bool
	MessageBy string
	// UserID is the input's author (conversation.Input.User; "" for none), the
	// inputs.user_id that CountPending counts by (the backends' migration 00007).
	UserID string
}

// Enqueue implements conversation.Store.Enqueue: it checks in and calls insert once
// with its columns (see NewInput): its payload as JSON, its creation time (in.CreatedAt
// in UTC, whole microseconds, when set; otherwise now) and now. insert inserts the
// input as pending with no attempts and the next seq, doing nothing when its id exists
// (INSERT … ON CONFLICT (id) DO NOTHING), and reports whether it inserted a row; in
// the same transaction, when it did, it writes the thread's lease row (see the
// backends' migration 00005): a held lease is told the new seq (newest, and
// message_seq and message_by for a user's message).
func Enqueue(in conversation.Input, insert func(r NewInput) (bool, error)) (bool, error) {
	channelCommand := in.Kind == conversation.KindCommand && in.Key.TeamID != "" && in.Key.ChannelID != ""
	if in.ID == "" || in.Kind == "" || (!in.Key.Valid() && !channelCommand) {
		return false, fmt.Errorf("enqueue input %q: id, kind and key are required (a thread_ts is optional only for a command)", in.ID)
	}
	payload, err := payloadOf(in)
	if err != nil {
		return false, fmt.Errorf("enqueue input %s: %w", in.ID, err)
	}
	r := NewInput{ID: in.ID, EventID: Text(in.EventID), Key: in.Key, Kind: string(in.Kind), Payload: payload, Now: Now(), UserID: Text(in.User())}
	r.Created = r.Now
	if !in.CreatedAt.IsZero() {
		r.Created = in.CreatedAt.UTC().Truncate(time.Microsecond)
	}
	if in.Kind == conversation.KindUserMessage {
		r.Message = true
		if in.Message != nil {
			r.MessageBy = Text(in.Message.UserID)
		}
	}
	ok, err := insert(r)
	if err != nil {
		return false, fmt.Errorf("enqueue input %s: %w", in.ID, err)
	}
	return ok, nil
}

// payloadOf returns the JSON of what in carries, by its kind: the UserMessage, the
// ActionInput, the CommandInput or the AssistantThreadInput (nil when it carries
// nothing), made storable (JSON).
func payloadOf(in conversation.Input) (JSONText, error) {
	var v any
	switch {
	case in.Kind == conversation.KindAction && in.Action != nil:
		v = in.Action
	case in.Kind == conversation.KindCommand && in.Command != nil:
		v = in.Command
	case in.Kind == conversation.KindAssistantThread && in.Thread != nil:
		v = in.Thread
	case in.Message != nil:
		v = in.Message
	default:
		return nil, nil
	}
	j, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return JSON(j), nil
}

// Finish implements conversation.Store.Finish of input id under lease l (the zero
// Lease for an unfenced write): once status is known to be one of the
// conversation.InputStatus constants, update sets it on the input, when l is zero, or
// when l's thread is the input's and l still holds it (owner and token), and reports
// whether it did, whether the input exists and whether l holds its thread (any value
// when l is zero). Errors: conversation.ErrNotFound, conversation.ErrLeaseLost.
func Finish(l conversation.Lease, id string, status conversation.InputStatus, update func(now time.Time) (finished, exists, held bool, err error)) error {
	if !ValidStatus(status) {
		return fmt.Errorf("finish input %s: unknown status %q", id, status)
	}
	if l.Held() {
		if err := checkLease(l); err != nil {
			return fmt.Errorf("finish input %s: %w", id, err)
		}
	}
	finished, exists, held, err := update(Now())
	switch {
	case err != nil || finished:
	case !exists || !l.Held():
		err = conversation.ErrNotFound
	case !held:
		err = conversation.ErrLeaseLost
	default:
		err = fmt.Errorf("input is not of thread %s: %w", l.Key, conversation.ErrLeaseLost)
	}
	if err != nil {
		return fmt.Errorf("finish input %s: %w", id, err)
	}
	return nil
}

// CountPending implements conversation.Store.CountPending's checks: limit must be
// positive. count runs the backend's query and returns its two counts.
func CountPending(key conversation.Key, limit int, count func() (conversation.PendingCounts, error)) (conversation.PendingCounts, error) {
	if limit <= 0 {
		return conversation.PendingCounts{}, fmt.Errorf("count pending inputs of %s: limit %d is not positive", key, limit)
	}
	c, err := count()
	if err != nil {
		return conversation.PendingCounts{}, fmt.Errorf("count pending inputs of %s: %w", key, err)
	}
	return c, nil
}

// ValidStatus reports whether s is one of the conversation.InputStatus constants.
func ValidStatus(s conversation.InputStatus) bool {
	switch s {
	case conversation.InputPending, conversation.InputDone, conversation.InputDropped, conversation.InputFailed:
		return true
	}
	return false
}

// RowsAffected returns the number of rows that the statement whose result and error
// are res and err changed, so that an Exec and its count fail in one place:
// n, err := RowsAffected(db.ExecContext(…)).
func RowsAffected(res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// ByThread returns the indexes of ins in the order a batch enqueues them
// (conversation.Store.EnqueueBatch): sorted by thread, and in their order within a
// thread (a stable sort), so that a thread's inputs keep their order and two batches
// take the rows of their threads in the same order.
func ByThread(ins []conversation.Input) []int {
	order := make([]int, len(ins))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ka, kb := ins[a].Key, ins[b].Key
		return cmp.Or(cmp.Compare(ka.TeamID, kb.TeamID), cmp.Compare(ka.ChannelID, kb.ChannelID), cmp.Compare(ka.ThreadTS, kb.ThreadTS))
	})
	return order
}
