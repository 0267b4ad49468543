package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/lib/pq"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/internal/sqlstore"
)

// Checkpoints are the conversations and their messages: the checkpoint a turn loads
// and saves (Load, Save), and conversation.Store's other queries of conversations
// (Exists, Workflows, DeleteIdle).
type Checkpoints struct{ *pool }

// loadSQL reads a checkpoint in one statement: the control row, LEFT JOINed to its
// newest $4 messages (none when there are none or $4 is 0), oldest first. Messages are
// numbered 1, 2, 3, … with no gaps (Save numbers them from last_seq+1 in the statement
// that moves last_seq, and they are only deleted with their conversation), so the
// newest $4 are those with last_seq-$4 < seq <= last_seq: a range of the primary key
// (conversation_id, seq) whose size does not depend on the conversation's length,
// whatever plan the planner picks. (ORDER BY seq DESC LIMIT $4 would too, but only when
// the planner walks the index backwards; without statistics on the table, as in the
// first minute of a new database, it fetches every message of the conversation and
// sorts them.) One statement reads one snapshot, so the control row and the messages
// agree. The state, which can be large (it holds the summary), is sent on one row
// only, the first the join yields.
const loadSQL = `
SELECT c.id, c.version, c.last_seq, c.created_at, c.updated_at,
	CASE WHEN row_number() OVER () = 1 THEN c.state END,
	m.seq, m.created_at, m.prompt_tokens, m.completion_tokens, m.role, m.user_id, m.slack_ts, m.text, m.meta
FROM conversations AS c
LEFT JOIN messages AS m
	ON m.conversation_id = c.id AND m.seq > c.last_seq - $4::bigint AND m.seq <= c.last_seq
WHERE c.team_id = $1 AND c.channel_id = $2 AND c.thread_ts = $3
ORDER BY m.seq`

// Load returns the conversation for key with at most recent of its newest messages,
// oldest first, in one statement (loadSQL), so in one round trip. It costs the same
// however long the conversation is. Errors: conversation.ErrNotFound.
func (s *Checkpoints) Load(ctx context.Context, key conversation.Key, recent int) (*conversation.Checkpoint, error) {
	cp, err := s.load(ctx, key, recent)
	if err != nil {
		return nil, classify(fmt.Errorf("load conversation %s: %w", key, err))
	}
	return cp, nil
}

func (s *Checkpoints) load(ctx context.Context, key conversation.Key, recent int) (*conversation.Checkpoint, error) {
	rows, err := s.loadStmt.QueryContext(ctx, key.TeamID, key.ChannelID, key.ThreadTS, max(recent, 0))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var (
		cp    *conversation.Checkpoint
		c     conversationRow
		state sqlstore.JSONText
		m     nullMessage
	)
	for rows.Next() {
		if err := rows.Scan(&c.ID, &c.Version, &c.LastSeq, &c.CreatedAt, &c.UpdatedAt, &state,
			&m.Seq, &m.CreatedAt, &m.PromptTokens, &m.CompletionTokens, &m.Role, &m.UserID, &m.SlackTS, &m.Text, &m.Meta); err != nil {
			return nil, err
		}
		if cp == nil {
			cp = new(conversation.Checkpoint)
		}
		if state != nil {
			c.State, state = state, nil
		}
		if m.Seq.Valid {
			if cp.Messages == nil {
				cp.Messages = make([]conversation.Message, 0, min(int64(recent), c.LastSeq))
			}
			cp.Messages = append(cp.Messages, m.message())
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if cp == nil {
		return nil, conversation.ErrNotFound
	}
	c.TeamID, c.ChannelID, c.ThreadTS = key.TeamID, key.ChannelID, key.ThreadTS // what the row matched
	if cp.Conversation, err = c.Conversation(); err != nil {
		return nil, err
	}
	return cp, nil
}

// Exists reports whether the bot is part of thread key: a conversation exists for it,
// or a pending input (an index lookup each: the conversations' unique key, and
// inputs_thread_pending).
func (s *Checkpoints) Exists(ctx context.Context, key conversation.Key) (bool, error) {
	var ok bool
	err := s.intake.GetContext(ctx, &ok, `
		SELECT EXISTS (SELECT FROM conversations WHERE team_id = $1 AND channel_id = $2 AND thread_ts = $3)
			OR EXISTS (SELECT FROM inputs WHERE team_id = $1 AND channel_id = $2 AND thread_ts = $3 AND status = 'pending')`,
		key.TeamID, key.ChannelID, key.ThreadTS)
	if err != nil {
		return false, classify(fmt.Errorf("find conversation %s: %w", key, err))
	}
	return ok, nil
}

// Save writes a turn in ONE statement (createSQL or updateSQL), which PostgreSQL runs
// as a transaction of its own when sent outside one: one round trip and one commit,
// where BEGIN, a statement per table and COMMIT take a round trip each. Its
// sub-statements (data-modifying WITH queries) all see the snapshot the statement
// started with, not one another's writes, and all run to completion whether or not
// anything reads them; so each write is made conditional on the RETURNING rows of the
// checks it depends on:
//
//   - input locks turn.InputID's row if that input is pending ($7, empty when there
//     is none). FOR UPDATE waits for a concurrent writer of the row and then re-checks
//     status = 'pending' on the row's newest version, and holds the row until the
//     statement commits, so the input cannot be answered, finished or deleted in
//     between.
//   - lease locks the thread's lease row FOR SHARE if turn.Lease still holds it (owner
//     $19 and token $18; nothing to check when $18 is 0, the zero Lease). Like FOR
//     UPDATE it waits for a concurrent writer of the row (an Acquire taking the thread
//     over) and re-checks owner and token on the row's newest version; and it holds
//     the row until the statement commits, so that no Acquire can take the thread
//     over in between (a takeover's UPDATE waits for the lock, and Save's own
//     statement is short). FOR SHARE rather than FOR KEY SHARE, which an UPDATE that
//     changes no key column, such as a takeover, would not wait for. It does hold up
//     a Renew or an Enqueue of the thread, which update the row, until the commit.
//   - conv creates the conversation (createSQL; ON CONFLICT DO NOTHING yields no row
//     when the thread exists) or updates its control row where the version is still
//     $20 (updateSQL; the UPDATE's row lock makes a concurrent Save from the same
//     version wait and then find the version changed). Either only when there is no
//     input or input found it pending, and when there is no lease or lease found it
//     held; RETURNING gives the id and the new last_seq.
//   - appended inserts the messages, unnested from one array per column and numbered
//     last_seq-$5+1 … last_seq: one row per message for each row of conv, so none
//     when conv wrote nothing.
//   - done marks the locked input done, only when conv wrote its row.
//   - usage inserts the turn's token usage records (turn.Usage), unnested from one
//     array per column, one row per record for each row of conv: none when conv
//     wrote nothing. So a turn that only adds its usage is still one statement.
//   - seen and released free the lease when $26 (turn.Release) is set, as releaseSQL
//     does, and only when conv wrote: seen reads the lease's enqueued count in the
//     statement's snapshot (unlocked, unlike lease), released frees the row if the
//     count is still that on its newest version and no input of the thread but the
//     one marked done ($7) is pending in the snapshot; the guard against a concurrent
//     Enqueue is releaseSQL's. released upgrades the lock lease took on the row; only
//     the holder's Save locks it FOR SHARE, and a holder runs one Save with Release
//     at a time, so no two statements wait on each other's share lock.
//
// The main SELECT returns conv's id and last_seq (NULL when conv wrote nothing, and
// then nothing was written at all), whether the input was pending and whether the
// lease held, to say which check failed, and whether the lease was freed. The input and lease rows are locked before
// the conversation's (conv's conditions read them first); DeleteIdle locks inputs
// before conversations too, and skips the lease rows that others hold locked.
//
// conv also writes the state's workflow columns (sqlstore.WorkflowColumns), which
// Workflows reads: on most turns with the values they had, so that the update stays
// HOT (see migration 00003).
//
// Parameters: $1-$3 the key, $4 the state (JSON), $5 the number of messages, $6 the
// time, $7 the input id (or empty), $8-$14 the messages' role, user_id, slack_ts,
// text, prompt_tokens, completion_tokens and meta (empty for NULL), $15-$17 the
// state's workflow name, status and starter (NULL when it has no workflow), $18 and
// $19 the lease's token (0 for none) and owner, $20-$25 the usage records' user_id,
// workflow, model, turns, prompt_tokens and completion_tokens, $26 whether to free
// the lease, and $27 (updateSQL only) the expected version.
const (
	saveChecksSQL = `
WITH input AS MATERIALIZED (
	SELECT id FROM inputs WHERE $7::text <> '' AND id = $7::text AND status = 'pending'
	FOR UPDATE
),
lease AS MATERIALIZED (
	SELECT FROM leases
	WHERE $18::bigint <> 0 AND team_id = $1::text AND channel_id = $2::text AND thread_ts = $3::text
		AND owner = $19::text AND token = $18::bigint
	FOR SHARE
),`
	saveChecked = `($7::text = '' OR EXISTS (SELECT FROM input)) AND ($18::bigint = 0 OR EXISTS (SELECT FROM lease))`

	saveRestSQL = `
appended AS (
	INSERT INTO messages (conversation_id, seq, created_at, prompt_tokens, completion_tokens,
		role, user_id, slack_ts, text, meta)
	SELECT conv.id, conv.last_seq - $5::bigint + m.ord, $6::timestamptz, m.prompt_tokens, m.completion_tokens,
		m.role, m.user_id, m.slack_ts, m.text, nullif(m.meta, '')::jsonb
	FROM conv, unnest($8::text[], $9::text[], $10::text[], $11::text[], $12::integer[], $13::integer[], $14::text[])
		WITH ORDINALITY AS m (role, user_id, slack_ts, text, prompt_tokens, completion_tokens, meta, ord)
),
done AS (
	UPDATE inputs SET status = 'done', updated_at = $6::timestamptz
	WHERE id = (SELECT id FROM input) AND EXISTS (SELECT FROM conv)
),
usage AS (
	INSERT INTO token_usage (` + sqlstore.UsageCols + `)
	SELECT $6::timestamptz, $1::text, $2::text, $3::text, u.user_id, u.workflow, u.model, u.turns, u.prompt_tokens,
		u.completion_tokens
	FROM conv, unnest($20::text[], $21::text[], $22::text[], $23::integer[], $24::integer[], $25::integer[])
		AS u (user_id, workflow, model, turns, prompt_tokens, completion_tokens)
),
seen AS (
	SELECT enqueued FROM leases
	WHERE $26::boolean AND team_id = $1::text AND channel_id = $2::text AND thread_ts = $3::text
		AND owner = $19::text AND token = $18::bigint
),
released AS (
	UPDATE leases
	SET owner = NULL, expires_at = now(), newest = 0, message_seq = 0, message_by = '', stop_target = '', stop_by = ''
	WHERE team_id = $1::text AND channel_id = $2::text AND thread_ts = $3::text AND owner = $19::text AND token = $18::bigint
		AND enqueued = (SELECT enqueued FROM seen) AND EXISTS (SELECT FROM conv)
		AND NOT EXISTS (SELECT FROM inputs
			WHERE team_id = $1::text AND channel_id = $2::text AND thread_ts = $3::text AND status = 'pending'
				AND id <> $7::text)
	RETURNING true
)
SELECT (SELECT id FROM conv), (SELECT last_seq FROM conv), EXISTS (SELECT FROM input), EXISTS (SELECT FROM lease),
	EXISTS (SELECT FROM released)`

	createSQL = saveChecksSQL + `
conv AS (
	INSERT INTO conversations (team_id, channel_id, thread_ts, state, version, last_seq, created_at, updated_at,
		workflow, workflow_status, workflow_started_by)
	SELECT $1::text, $2::text, $3::text, $4::jsonb, 1, $5::bigint, $6::timestamptz, $6::timestamptz,
		$15::text, $16::text, $17::text
	WHERE ` + saveChecked + `
	ON CONFLICT (team_id, channel_id, thread_ts) DO NOTHING
	RETURNING id, last_seq
),` + saveRestSQL

	updateSQL = saveChecksSQL + `
conv AS (
	UPDATE conversations
	SET state = $4::jsonb, version = version + 1, last_seq = last_seq + $5::bigint, updated_at = $6::timestamptz,
		workflow = $15::text, workflow_status = $16::text, workflow_started_by = $17::text
	WHERE team_id = $1::text AND channel_id = $2::text AND thread_ts = $3::text AND version = $27::bigint
		AND ` + saveChecked + `
	RETURNING id, last_seq
),` + saveRestSQL
)

// Save writes turn atomically, in one statement (createSQL or updateSQL): it creates the
// conversation (turn.Version 0) or updates its control row where the version still
// equals turn.Version, appends turn.Append numbered from the old last_seq+1, marks
// turn.InputID done and adds turn.Usage to the usage ledger, all only while
// turn.Lease, when set, still holds the thread; with turn.Release it frees the lease
// when no input of the thread is left pending. turn.Enqueue, turn.Merged,
// turn.Rewrite and turn.Events (the webhook outbox, migration 00009), when any, are
// written in the same transaction, one more statement each (and the release one
// more, releaseSQL, last), which then commits. It
// touches only the control row, the new messages, the input, the lease row and the
// usage rows, so it costs the same however long the conversation is. Text it cannot store as it is is stored repaired (sqlstore.Text,
// sqlstore.JSON).
//
// Errors, with nothing written: conversation.ErrLeaseLost when turn.Lease no longer
// holds the thread; conversation.ErrConflict when the conversation exists
// (turn.Version 0) or is not at turn.Version (including when it no longer exists), or
// when turn.InputID is not a pending input (already answered, finished or deleted).
func (s *Checkpoints) Save(ctx context.Context, turn conversation.Turn) (conversation.Saved, error) {
	saved, err := sqlstore.Save(turn, func(turn conversation.Turn, state sqlstore.JSONText) (conversation.Saved, error) {
		return s.save(ctx, turn, state)
	})
	return saved, classify(err)
}

// rewriteMessageSQL sets the text of the messages of conversation $1 posted at
// Slack ts $2 to $3 and clears their meta (conversation.Turn.Rewrite).
const rewriteMessageSQL = `UPDATE messages SET text = $3::text, meta = NULL WHERE conversation_id = $1::bigint AND slack_ts = $2::text`

// save writes turn, whose state is encoded as state, once sqlstore.Save has checked it.
func (s *Checkpoints) save(ctx context.Context, turn conversation.Turn, state sqlstore.JSONText) (conversation.Saved, error) {
	n := int64(len(turn.Append))
	cols, usage := messageColumns(turn.Append), usageColumns(turn.Usage)
	wfName, wfStatus, wfStartedBy := sqlstore.WorkflowColumns(turn.State)
	args := []any{
		turn.Key.TeamID, turn.Key.ChannelID, turn.Key.ThreadTS, state, n, sqlstore.Now(), turn.InputID,
		cols.role, cols.userID, cols.slackTS, cols.text, cols.promptTokens, cols.completionTokens, cols.meta,
		wfName, wfStatus, wfStartedBy, turn.Lease.Token, turn.Lease.Owner,
		usage.userID, usage.workflow, usage.model, usage.turns, usage.promptTokens, usage.completionTokens,
	}
	release := turn.Release && turn.Lease.Held()
	multi := len(turn.Enqueue) > 0 || len(turn.Events) > 0 || len(turn.Merged) > 0 || len(turn.Rewrite) > 0
	args = append(args, release && !multi) // the transaction's last statement frees it (releaseSQL)
	st := s.createStmt
	if turn.Version > 0 {
		st = s.updateStmt
		args = append(args, turn.Version)
	}
	var (
		id, lastSeq             sql.NullInt64
		pending, held, released bool
		tx                      *sql.Tx
	)
	if multi {
		// The inputs, the merged inputs, the rewrites and webhook events go in with
		// the turn: one transaction, one more statement each.
		var err error
		if tx, err = s.db.BeginTx(ctx, nil); err != nil {
			return conversation.Saved{}, err
		}
		defer tx.Rollback()
		st = tx.StmtContext(ctx, st)
	}
	err := st.QueryRowContext(ctx, args...).Scan(&id, &lastSeq, &pending, &held, &released)
	if isUniqueViolation(err) {
		return conversation.Saved{}, conversation.ErrConflict
	}
	if err != nil {
		return conversation.Saved{}, err
	}
	if !id.Valid {
		switch {
		case turn.Lease.Held() && !held:
			return conversation.Saved{}, conversation.ErrLeaseLost
		case turn.InputID != "" && !pending:
			return conversation.Saved{}, fmt.Errorf("input %s is not pending: %w", turn.InputID, conversation.ErrConflict)
		}
		return conversation.Saved{}, conversation.ErrConflict
	}
	if tx != nil {
		if err := markMerged(ctx, tx, turn.Merged); err != nil {
			return conversation.Saved{}, err
		}
		for _, rw := range turn.Rewrite {
			if _, err := tx.ExecContext(ctx, rewriteMessageSQL, id.Int64, rw.SlackTS, sqlstore.Text(rw.Text)); err != nil {
				return conversation.Saved{}, fmt.Errorf("rewrite message %s: %w", rw.SlackTS, err)
			}
		}
		enqueueTx := tx.StmtContext(ctx, s.enqueueStmt)
		for _, in := range turn.Enqueue {
			if _, err := enqueue(ctx, enqueueTx, in); err != nil {
				return conversation.Saved{}, err
			}
		}
		if err := insertEvents(ctx, tx, turn.Events); err != nil {
			return conversation.Saved{}, err
		}
		if release {
			l := turn.Lease
			if err := tx.StmtContext(ctx, s.releaseStmt).QueryRowContext(ctx, l.Key.TeamID, l.Key.ChannelID, l.Key.ThreadTS,
				l.Owner, l.Token).Scan(&held, &released); err != nil {
				return conversation.Saved{}, fmt.Errorf("release lease: %w", err)
			}
		}
		if err := tx.Commit(); err != nil {
			return conversation.Saved{}, err
		}
	}
	return conversation.Saved{ConversationID: id.Int64, Version: turn.Version + 1, FirstSeq: lastSeq.Int64 - n + 1, Released: released}, nil
}

// messageCols holds messages column by column, as the arrays saveRestSQL unnests.
type messageCols struct {
	role, userID, slackTS, text, meta pq.StringArray
	promptTokens, completionTokens    pq.Int64Array
}

// usageCols holds usage records column by column, as saveRestSQL's usage unnests.
type usageCols struct {
	userID, workflow, model               pq.StringArray
	turns, promptTokens, completionTokens pq.Int64Array
}

func usageColumns(recs []conversation.UsageRecord) usageCols {
	n := len(recs)
	if n == 0 {
		return usageCols{} // nil arrays are NULL, which unnest to no row
	}
	c := usageCols{
		userID: make(pq.StringArray, n), workflow: make(pq.StringArray, n), model: make(pq.StringArray, n),
		turns: make(pq.Int64Array, n), promptTokens: make(pq.Int64Array, n), completionTokens: make(pq.Int64Array, n),
	}
	for i, r := range recs {
		c.userID[i], c.workflow[i], c.model[i] = r.UserID, r.Workflow, r.Model
		c.turns[i], c.promptTokens[i], c.completionTokens[i] = int64(r.Turns), int64(r.PromptTokens), int64(r.CompletionTokens)
	}
	return c
}

func messageColumns(msgs []conversation.Message) messageCols {
	n := len(msgs)
	c := messageCols{
		role: make(pq.StringArray, n), userID: make(pq.StringArray, n), slackTS: make(pq.StringArray, n),
		text: make(pq.StringArray, n), meta: make(pq.StringArray, n),
		promptTokens: make(pq.Int64Array, n), completionTokens: make(pq.Int64Array, n),
	}
	for i, m := range msgs {
		c.role[i], c.userID[i], c.slackTS[i], c.text[i] = string(m.Role), m.UserID, m.SlackTS, m.Text
		c.meta[i] = string(m.Meta) // '' is NULL; sqlstore.Save made sure any other meta is JSON
		c.promptTokens[i], c.completionTokens[i] = int64(m.PromptTokens), int64(m.CompletionTokens)
	}
	return c
}

// Workflows lists the conversations of channelID in teamID whose workflow is running,
// started by startedBy ("" for anyone's), most recently updated first (ties: newest
// conversation first), at most limit. It walks the partial index
// conversations_workflows, which holds running workflows only, and sorts the few rows
// it finds. The test for an empty startedBy costs the index nothing: the statement is
// planned with its parameters' values, which fold the condition to one of its sides.
func (s *Checkpoints) Workflows(ctx context.Context, teamID, channelID, startedBy string, limit int) ([]conversation.WorkflowRef, error) {
	refs, err := sqlstore.Workflows(teamID, channelID, startedBy, limit, func(rows *[]workflowRow) error {
		return s.db.SelectContext(ctx, rows, `
			SELECT team_id, channel_id, thread_ts, workflow, workflow_started_by, updated_at
			FROM conversations
			WHERE team_id = $1::text AND channel_id = $2::text AND workflow_status = 'running'
				AND ($3::text = '' OR workflow_started_by = $3::text)
			ORDER BY updated_at DESC, id DESC LIMIT $4`,
			teamID, channelID, startedBy, limit)
	})
	return refs, classify(err)
}

// DeleteIdle deletes, in one transaction, the inputs created before before, the
// conversations not updated since then (their messages go with them, ON DELETE
// CASCADE) and then the free lease rows of threads left with neither; it returns the
// number of conversations deleted. Inputs go first: Save locks an input before its
// conversation, and taking locks in one order rules out deadlocks. Lease rows locked
// by others (SKIP LOCKED: being acquired, or held by a Save) are left for the next
// time rather than waited for. Finding a lease row's inputs reads every input (no
// index covers inputs that are not pending), once: DeleteIdle runs rarely.
func (s *Checkpoints) DeleteIdle(ctx context.Context, before time.Time) (int, error) {
	n, err := sqlstore.DeleteIdle(ctx, s.db.DB,
		`DELETE FROM inputs WHERE created_at < $1`,
		`DELETE FROM conversations WHERE updated_at < $1`,
		`DELETE FROM leases WHERE (team_id, channel_id, thread_ts) IN (
			SELECT l.team_id, l.channel_id, l.thread_ts FROM leases AS l
			WHERE l.owner IS NULL
				AND NOT EXISTS (SELECT FROM conversations AS c
					WHERE c.team_id = l.team_id AND c.channel_id = l.channel_id AND c.thread_ts = l.thread_ts)
				AND NOT EXISTS (SELECT FROM inputs AS i
					WHERE i.team_id = l.team_id AND i.channel_id = l.channel_id AND i.thread_ts = l.thread_ts)
			FOR UPDATE SKIP LOCKED)`,
		before)
	return n, classify(err)
}

// markMerged marks the inputs merged into a turn (conversation.Turn.Merged) done in
// its transaction. Errors: conversation.ErrConflict when one is not pending.
func markMerged(ctx context.Context, tx *sql.Tx, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	n, err := sqlstore.RowsAffected(tx.ExecContext(ctx,
		`UPDATE inputs SET status = 'done', updated_at = $2 WHERE id = ANY($1::text[]) AND status = 'pending'`,
		pq.Array(ids), sqlstore.Now()))
	if err != nil {
		return fmt.Errorf("mark merged inputs done: %w", err)
	}
	if n != int64(len(ids)) {
		return fmt.Errorf("merged inputs %v: %d of them not pending: %w", ids, int64(len(ids))-n, conversation.ErrConflict)
	}
	return nil
}
