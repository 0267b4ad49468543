package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/threadwright/threadwright/conversation"
)

// Save implements conversation.Store.Save around a backend's write: it rejects a turn
// that cannot be stored as it is (an incomplete key, a negative version, a message with
// no role or with a meta that is not JSON, a lease of another thread or without an
// owner), encodes turn.State as JSON ("encode state: …"), makes the state and the
// messages storable (JSON, Messages), and calls write with the turn so repaired and
// the state, which writes the turn or fails with conversation.ErrLeaseLost or
// conversation.ErrConflict. Its errors, and write's, are wrapped with the
// conversation's key and version ("save conversation <key> at version <n>: …").
func Save(turn conversation.Turn, write func(turn conversation.Turn, state JSONText) (conversation.Saved, error)) (conversation.Saved, error) {
	state, err := checkTurn(turn)
	var saved conversation.Saved
	if err == nil {
		turn.Append = Messages(turn.Append)
		saved, err = write(turn, JSON(state))
	}
	if err != nil {
		return conversation.Saved{}, fmt.Errorf("save conversation %s at version %d: %w", turn.Key, turn.Version, err)
	}
	return saved, nil
}

// checkTurn rejects a turn that cannot be stored as it is, and returns its state
// encoded as JSON.
func checkTurn(turn conversation.Turn) (state JSONText, err error) {
	if !turn.Key.Valid() {
		return nil, errors.New("incomplete key")
	}
	if turn.Version < 0 {
		return nil, errors.New("negative version")
	}
	if l := turn.Lease; l.Held() {
		switch {
		case l.Owner == "":
			return nil, errors.New("lease without an owner")
		case l.Key != turn.Key:
			return nil, fmt.Errorf("lease of another thread (%s)", l.Key)
		}
	}
	for i, m := range turn.Append {
		if m.Role == "" {
			return nil, fmt.Errorf("message %d has no role", i)
		}
		if len(m.Meta) > 0 && !json.Valid(m.Meta) {
			return nil, fmt.Errorf("message %d: meta is not valid JSON", i)
		}
	}
	if state, err = json.Marshal(turn.State); err != nil {
		return nil, fmt.Errorf("encode state: %w", err)
	}
	return state, nil
}

// DeleteIdle implements conversation.Store.DeleteIdle: in one transaction on db, it
// runs deleteInputs, which deletes the inputs created before before, and then
// deleteConversations, which deletes the conversations not updated since then (their
// messages go with them, ON DELETE CASCADE), both with before (bound as the backend
// stores times) as their one parameter, then deleteLeases, without parameters, which
// deletes the free lease rows of threads left with neither a conversation nor an
// input, and returns the number of conversations deleted. Inputs go first:
// PostgreSQL's Save locks an input before its conversation, and taking locks in one
// order rules out deadlocks (deleteLeases skips the lease rows others hold locked).
func DeleteIdle(ctx context.Context, db *sql.DB, deleteInputs, deleteConversations, deleteLeases string, before any) (int, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("delete idle conversations: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, deleteInputs, before); err != nil {
		return 0, fmt.Errorf("delete old inputs: %w", err)
	}
	n, err := RowsAffected(tx.ExecContext(ctx, deleteConversations, before))
	if err != nil {
		return 0, fmt.Errorf("delete idle conversations: %w", err)
	}
	if _, err := tx.ExecContext(ctx, deleteLeases); err != nil {
		return 0, fmt.Errorf("delete free leases: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("delete idle conversations: %w", err)
	}
	return int(n), nil
}
