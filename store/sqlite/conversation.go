package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/internal/sqlstore"
)

// Checkpoints are the conversations and their messages: the checkpoint a turn loads
// and saves (Load, Save), and conversation.Store's other queries of conversations
// (Exists, Workflows, DeleteIdle).
type Checkpoints struct{ *pool }

const (
	loadConversationSQL = `
		SELECT id, state, version, last_seq, created_at, updated_at
		FROM conversations WHERE team_id = ? AND channel_id = ? AND thread_ts = ?`
	// Messages are append-only: seq <= last_seq selects exactly those the control row
	// counts, even when a Save commits between the two queries. They are numbered 1, 2,
	// 3, … with no gaps (Save numbers them from last_seq+1), so the newest ?3 are those
	// with ?2-?3 < seq <= ?2, a range of the primary key. A bound LIMIT would make SQLite
	// compile the statement again on every call (a LIMIT's bound value is part of the
	// plan), which cost about as much as the rest of the query.
	loadMessagesSQL = `
		SELECT seq, role, user_id, text, slack_ts, prompt_tokens, completion_tokens, meta, created_at
		FROM messages WHERE conversation_id = ?1 AND seq > ?2 - ?3 AND seq <= ?2
		ORDER BY seq`
)

// Load returns the conversation for key with at most recent of its newest messages,
// oldest first. It reads the control row, then a range of the messages' primary key
// that ends at last_seq, so it costs the same however long the conversation is.
// Errors: conversation.ErrNotFound.
func (s *Checkpoints) Load(ctx context.Context, key conversation.Key, recent int) (*conversation.Checkpoint, error) {
	cp, err := s.load(ctx, key, recent)
	if err != nil {
		return nil, classify(fmt.Errorf("load conversation %s: %w", key, err))
	}
	return cp, nil
}

func (s *Checkpoints) load(ctx context.Context, key conversation.Key, recent int) (*conversation.Checkpoint, error) {
	c := conversationRow{TeamID: key.TeamID, ChannelID: key.ChannelID, ThreadTS: key.ThreadTS}
	err := s.st.loadConversation.QueryRowContext(ctx, key.TeamID, key.ChannelID, key.ThreadTS).
		Scan(&c.ID, &c.State, &c.Version, &c.LastSeq, &c.CreatedAt, &c.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, conversation.ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	cp := new(conversation.Checkpoint)
	if cp.Conversation, err = c.Conversation(); err != nil {
		return nil, err
	}
	if recent <= 0 || c.LastSeq == 0 {
		return cp, nil
	}
	rows, err := s.st.loadMessages.QueryContext(ctx, c.ID, c.LastSeq, recent)
	if err != nil {
		return nil, fmt.Errorf("load messages: %w", err)
	}
	defer rows.Close()
	cp.Messages = make([]conversation.Message, 0, min(int64(recent), c.LastSeq))
	for rows.Next() {
		var m messageRow
		if err := rows.Scan(&m.Seq, &m.Role, &m.UserID, &m.Text, &m.SlackTS, &m.PromptTokens, &m.CompletionTokens,
			&m.Meta, &m.CreatedAt); err != nil {
			return nil, fmt.Errorf("load messages: %w", err)
		}
		cp.Messages = append(cp.Messages, m.message())
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load messages: %w", err)
	}
	return cp, nil
}

// Exists reports whether the bot is part of thread key: a conversation exists for it,
// or a pending input (an index lookup each).
func (s *Checkpoints) Exists(ctx context.Context, key conversation.Key) (bool, error) {
	var ok bool
	err := s.read.GetContext(ctx, &ok, `
		SELECT EXISTS (SELECT 1 FROM conversations WHERE team_id = ?1 AND channel_id = ?2 AND thread_ts = ?3)
			OR EXISTS (SELECT 1 FROM inputs WHERE team_id = ?1 AND channel_id = ?2 AND thread_ts = ?3 AND status = 'pending')`,
		key.TeamID, key.ChannelID, key.ThreadTS)
	if err != nil {
		return false, classify(fmt.Errorf("find conversation %s: %w", key, err))
	}
	return ok, nil
}

// The statements of Save, each run in its transaction on the write connection.
// createSQL and updateSQL write only while lease ?10 (the fencing token, 0 for none)
// of owner ?11 still holds the thread: the lease check costs no statement of its own
// on the turns that pass it, and leaseHeldSQL tells why one wrote nothing.
const (
	// leaseHeldSQL tells whether owner ?4 holds thread ?1-?3 with token ?5.
	leaseHeldSQL = `
		SELECT EXISTS (SELECT 1 FROM leases
			WHERE team_id = ?1 AND channel_id = ?2 AND thread_ts = ?3 AND owner = ?4 AND token = ?5)`
	// saveLeaseHeld is createSQL's and updateSQL's lease check.
	saveLeaseHeld = `(?10 = 0 OR EXISTS (SELECT 1 FROM leases
			WHERE team_id = ?1 AND channel_id = ?2 AND thread_ts = ?3 AND owner = ?11 AND token = ?10))`
	createSQL = `
		INSERT INTO conversations (team_id, channel_id, thread_ts, state, version, last_seq, created_at, updated_at,
			workflow, workflow_status, workflow_started_by)
		SELECT ?1, ?2, ?3, ?4, 1, ?5, ?6, ?6, ?7, ?8, ?9
		WHERE ` + saveLeaseHeld + `
		RETURNING id`
	updateSQL = `
		UPDATE conversations SET state = ?4, version = version + 1, last_seq = last_seq + ?5, updated_at = ?6,
			workflow = ?7, workflow_status = ?8, workflow_started_by = ?9
		WHERE team_id = ?1 AND channel_id = ?2 AND thread_ts = ?3 AND version = ?12 AND ` + saveLeaseHeld + `
		RETURNING id, last_seq`
	insertMessageSQL = `
		INSERT INTO messages (conversation_id, seq, role, user_id, text, slack_ts, prompt_tokens, completion_tokens, meta, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	markDoneSQL = `UPDATE inputs SET status = 'done', updated_at = ? WHERE id = ? AND status = 'pending'`
)

// Save writes turn in one transaction: it creates the conversation (turn.Version 0) or
// updates its control row where the version still equals turn.Version, in either case
// only while turn.Lease, when set, still holds the thread (SQLite runs one writing
// transaction at a time, so no Acquire can take the thread over before the commit);
// it appends turn.Append numbered from the old last_seq+1, marks turn.InputID done,
// enqueues turn.Enqueue (as Enqueue), adds turn.Events to the webhook outbox
// (migration 00009) and, with turn.Release, frees the lease when no input of the
// thread is left pending (releaseSQL, last). It touches only the control row, the new
// messages, the input and the lease row, so it costs the same however long the
// conversation is. Text it cannot store as it is is stored repaired (sqlstore.Text,
// sqlstore.JSON).
//
// Errors, with nothing written: conversation.ErrLeaseLost when turn.Lease no longer
// holds the thread; conversation.ErrConflict when the conversation exists
// (turn.Version 0) or is not at turn.Version (including when it no longer exists), or
// when turn.InputID is not a pending input (already answered, finished or deleted).
func (s *Checkpoints) Save(ctx context.Context, turn conversation.Turn) (conversation.Saved, error) {
	saved, err := sqlstore.Save(turn, func(turn conversation.Turn, state sqlstore.JSONText) (saved conversation.Saved, err error) {
		err = s.turnWrite(ctx, func(ctx context.Context, tx *sql.Tx) (err error) {
			saved, err = s.save(ctx, tx, turn, state)
			return err
		})
		return saved, err
	})
	return saved, classify(err)
}

// save writes turn, whose state is encoded as state, in tx, its turn write
// (turnWrite), once sqlstore.Save has checked it.
func (s *Checkpoints) save(ctx context.Context, tx *sql.Tx, turn conversation.Turn, state sqlstore.JSONText) (conversation.Saved, error) {
	at := sqlstore.Now()
	n := int64(len(turn.Append))
	k := turn.Key

	wfName, wfStatus, wfStartedBy := sqlstore.WorkflowColumns(turn.State)
	args := []any{k.TeamID, k.ChannelID, k.ThreadTS, state, n, timestamp(at), wfName, wfStatus, wfStartedBy,
		turn.Lease.Token, turn.Lease.Owner}
	var (
		id, lastSeq int64
		err         error
	)
	if turn.Version == 0 {
		lastSeq = n
		err = tx.StmtContext(ctx, s.st.create).QueryRowContext(ctx, args...).Scan(&id)
		if isUniqueViolation(err) {
			return conversation.Saved{}, conversation.ErrConflict
		}
	} else {
		err = tx.StmtContext(ctx, s.st.update).QueryRowContext(ctx, append(args, turn.Version)...).Scan(&id, &lastSeq)
	}
	if errors.Is(err, sql.ErrNoRows) {
		return conversation.Saved{}, s.notWritten(ctx, tx, turn.Lease)
	}
	if err != nil {
		return conversation.Saved{}, err
	}
	first := lastSeq - n + 1
	if err := s.appendMessages(ctx, tx, id, first, turn.Append, at); err != nil {
		return conversation.Saved{}, err
	}
	for _, rw := range turn.Rewrite {
		if _, err := tx.ExecContext(ctx, `UPDATE messages SET text = ?3, meta = NULL WHERE conversation_id = ?1 AND slack_ts = ?2`,
			id, rw.SlackTS, sqlstore.Text(rw.Text)); err != nil {
			return conversation.Saved{}, fmt.Errorf("rewrite message %s: %w", rw.SlackTS, err)
		}
	}
	if err := s.markDone(ctx, tx, turn, at); err != nil {
		return conversation.Saved{}, err
	}
	for _, u := range turn.Usage {
		if _, err := tx.StmtContext(ctx, s.st.insertUsage).ExecContext(ctx, sqlstore.UsageArgs(k, u, timestamp(at))...); err != nil {
			return conversation.Saved{}, fmt.Errorf("insert usage: %w", err)
		}
	}
	for _, in := range turn.Enqueue {
		if _, err := enqueue(ctx, tx, &s.st, in); err != nil {
			return conversation.Saved{}, err
		}
	}
	if err := insertEvents(ctx, tx, turn.Events); err != nil {
		return conversation.Saved{}, err
	}
	released, err := s.release(ctx, tx, turn, at)
	if err != nil {
		return conversation.Saved{}, err
	}
	return conversation.Saved{ConversationID: id, Version: turn.Version + 1, FirstSeq: first, Released: released}, nil
}

// notWritten tells why Save's createSQL or updateSQL wrote nothing in tx:
// conversation.ErrLeaseLost when l is set and no longer holds its thread, else
// conversation.ErrConflict (the version moved on, or the conversation is gone).
func (s *Checkpoints) notWritten(ctx context.Context, tx *sql.Tx, l conversation.Lease) error {
	if !l.Held() {
		return conversation.ErrConflict
	}
	held, err := s.leaseHeld(ctx, tx, l)
	switch {
	case err != nil:
		return err
	case !held:
		return conversation.ErrLeaseLost
	}
	return conversation.ErrConflict
}

// release frees turn's lease in tx, Save's transaction, with turn.Release, when no
// input of the thread is pending (releaseSQL), and reports whether it did. It runs
// last: releaseSQL sees the input marked done and what the turn enqueued.
func (s *Checkpoints) release(ctx context.Context, tx *sql.Tx, turn conversation.Turn, at time.Time) (bool, error) {
	l, k := turn.Lease, turn.Key
	if !turn.Release || !l.Held() {
		return false, nil
	}
	n, err := sqlstore.RowsAffected(tx.StmtContext(ctx, s.st.release).ExecContext(ctx,
		k.TeamID, k.ChannelID, k.ThreadTS, l.Owner, l.Token, timestamp(at)))
	if err != nil {
		return false, fmt.Errorf("release lease: %w", err)
	}
	return n == 1, nil
}

// markDone marks the turn's input done, with the inputs merged into it (a burst,
// docs/architecture.md "Double texting"), in tx: ErrConflict when one is not pending.
func (s *Checkpoints) markDone(ctx context.Context, tx *sql.Tx, turn conversation.Turn, at time.Time) error {
	ids := turn.Merged
	if turn.InputID != "" {
		ids = append([]string{turn.InputID}, ids...)
	}
	for _, id := range ids {
		n, err := sqlstore.RowsAffected(tx.StmtContext(ctx, s.st.markDone).ExecContext(ctx, timestamp(at), id))
		if err != nil {
			return fmt.Errorf("mark input %s done: %w", id, err)
		}
		if n == 0 {
			return fmt.Errorf("input %s is not pending: %w", id, conversation.ErrConflict)
		}
	}
	return nil
}

// appendMessages inserts msgs in tx as the messages of conversation id, numbered from
// first and created at at.
func (s *Checkpoints) appendMessages(ctx context.Context, tx *sql.Tx, id, first int64, msgs []conversation.Message, at time.Time) error {
	if len(msgs) == 0 {
		return nil
	}
	insert := tx.StmtContext(ctx, s.st.insertMessage)
	for i, m := range msgs {
		r := newMessageRow(id, first+int64(i), m, at)
		if _, err := insert.ExecContext(ctx, r.ConversationID, r.Seq, r.Role, r.UserID, r.Text, r.SlackTS,
			r.PromptTokens, r.CompletionTokens, r.Meta, r.CreatedAt); err != nil {
			return fmt.Errorf("insert messages: %w", err)
		}
	}
	return nil
}

// Workflows lists the conversations of channelID in teamID whose workflow is running,
// started by startedBy ("" for anyone's), most recently updated first (ties: newest
// conversation first), at most limit. It walks the partial index
// conversations_workflows, which holds running workflows only, and sorts the few rows
// it finds.
func (s *Checkpoints) Workflows(ctx context.Context, teamID, channelID, startedBy string, limit int) ([]conversation.WorkflowRef, error) {
	refs, err := sqlstore.Workflows(teamID, channelID, startedBy, limit, func(rows *[]workflowRow) error {
		return s.read.SelectContext(ctx, rows, `
			SELECT team_id, channel_id, thread_ts, workflow, workflow_started_by, updated_at
			FROM conversations
			WHERE team_id = ?1 AND channel_id = ?2 AND workflow_status = 'running'
				AND (?3 = '' OR workflow_started_by = ?3)
			ORDER BY updated_at DESC, id DESC LIMIT ?4`,
			teamID, channelID, startedBy, limit)
	})
	return refs, classify(err)
}

// DeleteIdle deletes, in one transaction, the inputs created before before, the
// conversations not updated since then (their messages go with them, ON DELETE
// CASCADE) and then the free lease rows of threads left with neither. It returns the
// number of conversations deleted.
func (s *Checkpoints) DeleteIdle(ctx context.Context, before time.Time) (int, error) {
	n, err := sqlstore.DeleteIdle(ctx, s.write.DB,
		`DELETE FROM inputs WHERE created_at < ?`,
		`DELETE FROM conversations WHERE updated_at < ?`,
		`DELETE FROM leases WHERE owner IS NULL
			AND NOT EXISTS (SELECT 1 FROM conversations AS c
				WHERE c.team_id = leases.team_id AND c.channel_id = leases.channel_id AND c.thread_ts = leases.thread_ts)
			AND NOT EXISTS (SELECT 1 FROM inputs AS i
				WHERE i.team_id = leases.team_id AND i.channel_id = leases.channel_id AND i.thread_ts = leases.thread_ts)`,
		timestamp(before))
	return n, classify(err)
}
