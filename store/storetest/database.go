package storetest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/internal/sqlstore"
)

// MigrationsDown applies to db, in dialect, every migration in the directory
// migrations/ of fsys (where a backend embeds its schema), rolls them all back and
// applies them again, so that each Down is known to run, and to undo its Up:
// inputs.claimed_until, which migration 2 adds, conversations.workflow_status, which
// migration 3 adds, the knowledge base's tables sources and chunks, which migration 4
// adds, and inputs.seq and the leases table, which migration 5 adds, must exist after
// their migration's Up, and not after going down past it. Migration 5 drops what
// leases replace, inputs.claimed_until and the index inputs_pending (which migration
// 1 creates): they must be gone after it, and back after going down to 4. It also
// checks that migration 3 copies the workflow of the conversations saved before it
// out of their state, and that migration 5 numbers the inputs stored before it in the
// order of their creation, and the next input after them, and keeps them when it is
// rolled back. hasColumn reports whether table has column in db.
func MigrationsDown(t *testing.T, dialect goose.Dialect, db *sql.DB, fsys fs.FS, hasColumn func(t *testing.T, table, column string) bool) {
	t.Helper()
	ctx := context.Background()
	p, err := sqlstore.Migrations(dialect, db, fsys)
	if err != nil {
		t.Fatal(err)
	}
	m := &schemaCheck{t: t, dialect: dialect, db: db, hasColumn: hasColumn}

	// Conversations saved at version 2, before their workflow had columns.
	if _, err := p.UpTo(ctx, 2); err != nil {
		t.Fatalf("up to 2: %v", err)
	}
	m.insertAtVersion2()
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("Up: %v", err)
	}
	m.latest("after Up")
	m.inputSeqs()
	m.workflowColumns()

	if _, err := p.DownTo(ctx, 4); err != nil {
		t.Fatalf("down to 4: %v", err)
	}
	m.columns("after down to 4", true, true)
	m.pendingIndex("after down to 4", true)
	m.knowledge("after down to 4", true)
	m.leases("after down to 4", false)
	m.tables("after down to 4", false, [2]string{"inputs", "user_id"})
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM inputs`).Scan(&n); err != nil || n != 4 {
		t.Errorf("after down to 4: %d inputs (%v); want the 4 kept", n, err)
	}
	if _, err := p.DownTo(ctx, 3); err != nil {
		t.Fatalf("down to 3: %v", err)
	}
	m.columns("after down to 3", true, true)
	m.knowledge("after down to 3", false)
	if _, err := p.DownTo(ctx, 2); err != nil {
		t.Fatalf("down to 2: %v", err)
	}
	m.columns("after down to 2", true, false)
	if _, err := p.DownTo(ctx, 1); err != nil {
		t.Fatalf("down to 1: %v", err)
	}
	m.columns("after down to 1", false, false)
	m.pendingIndex("after down to 1", true)
	if _, err := p.DownTo(ctx, 0); err != nil {
		t.Fatalf("down to 0: %v", err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("Up again: %v", err)
	}
	m.latest("after Up again")
}

// schemaCheck looks at the schema and the rows of db, a database of dialect, for
// MigrationsDown; hasColumn reports whether a table has a column.
type schemaCheck struct {
	t         *testing.T
	dialect   goose.Dialect
	db        *sql.DB
	hasColumn func(t *testing.T, table, column string) bool
}

// columns checks that inputs.claimed_until (migrations 1 to 4) and
// conversations.workflow_status (from migration 3) exist or not, when.
func (m *schemaCheck) columns(when string, claimedUntil, workflowStatus bool) {
	t := m.t
	t.Helper()
	if got := m.hasColumn(t, "inputs", "claimed_until"); got != claimedUntil {
		t.Errorf("%s: inputs.claimed_until exists: %v; want %v", when, got, claimedUntil)
	}
	if got := m.hasColumn(t, "conversations", "workflow_status"); got != workflowStatus {
		t.Errorf("%s: conversations.workflow_status exists: %v; want %v", when, got, workflowStatus)
	}
}

// pendingIndex checks that the index inputs_pending (migrations 1 to 4) exists or
// not, when.
func (m *schemaCheck) pendingIndex(when string, want bool) {
	t := m.t
	t.Helper()
	ctx := context.Background()
	q := `SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = ?`
	if m.dialect == goose.DialectPostgres {
		q = `SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema() AND indexname = $1`
	}
	var n int
	if err := m.db.QueryRowContext(ctx, q, "inputs_pending").Scan(&n); err != nil {
		t.Fatalf("%s: look up index inputs_pending: %v", when, err)
	}
	if got := n == 1; got != want {
		t.Errorf("%s: index inputs_pending exists: %v; want %v", when, got, want)
	}
}

// tables checks that each of cols (a table and a column) exists or not, when.
func (m *schemaCheck) tables(when string, want bool, cols ...[2]string) {
	t := m.t
	t.Helper()
	for _, c := range cols {
		if got := m.hasColumn(t, c[0], c[1]); got != want {
			t.Errorf("%s: %s.%s exists: %v; want %v", when, c[0], c[1], got, want)
		}
	}
}

// knowledge checks that the knowledge base's tables (migration 4) exist or not, when.
func (m *schemaCheck) knowledge(when string, want bool) {
	m.t.Helper()
	m.tables(when, want, [2]string{"sources", "hash"}, [2]string{"chunks", "text"})
}

// leases checks that inputs.seq and the leases table (migration 5) exist or not, when.
func (m *schemaCheck) leases(when string, want bool) {
	m.t.Helper()
	m.tables(when, want, [2]string{"inputs", "seq"}, [2]string{"leases", "token"}, [2]string{"leases", "enqueued"})
}

// latest checks the schema of the latest migration, when.
func (m *schemaCheck) latest(when string) {
	m.t.Helper()
	m.columns(when, false, true)
	m.pendingIndex(when, false)
	m.knowledge(when, true)
	m.leases(when, true)
	m.tables(when, true, [2]string{"inputs", "user_id"})
}

// now is the SQL of the time now, as the dialect stores it (SQLite's INTEGER Unix
// microseconds).
func (m *schemaCheck) now() string {
	if m.dialect == goose.DialectPostgres {
		return "now()"
	}
	return "0"
}

// at is the SQL of the time sec seconds after the Unix epoch, as the dialect stores
// it.
func (m *schemaCheck) at(sec int) string {
	if m.dialect == goose.DialectPostgres {
		return fmt.Sprintf("to_timestamp(%d)", sec)
	}
	return fmt.Sprint(sec * 1_000_000)
}

// insertAtVersion2 stores, at version 2, inputs to be numbered by creation (then id)
// by migration 5, and conversations whose workflow migration 3 copies out of their
// state.
func (m *schemaCheck) insertAtVersion2() {
	t, db, now, at := m.t, m.db, m.now(), m.at
	t.Helper()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `
		INSERT INTO inputs (id, created_at, updated_at, team_id, channel_id, thread_ts, kind, status)
		VALUES ('b', `+at(2)+`, `+at(2)+`, 'T1', 'C1', '1.1', 'user_message', 'pending'),
			('c', `+at(1)+`, `+at(1)+`, 'T1', 'C1', '1.1', 'user_message', 'done'),
			('a', `+at(2)+`, `+at(2)+`, 'T1', 'C1', '1.2', 'user_message', 'pending')`); err != nil {
		t.Fatalf("insert inputs at version 2: %v", err)
	}
	if _, err := db.ExecContext(ctx, `
		INSERT INTO conversations (team_id, channel_id, thread_ts, state, version, last_seq, created_at, updated_at)
		VALUES ('T1', 'C1', '1.1', '{"mode": "workflow", "turns": 1, "workflow": {"name": "retro", "started_by": "U1", "locale": "en", "status": "running", "artifacts": {}}}', 1, 0, `+now+`, `+now+`),
			('T1', 'C1', '1.2', '{"mode": "assistant", "turns": 1}', 1, 0, `+now+`, `+now+`)`); err != nil {
		t.Fatalf("insert conversations at version 2: %v", err)
	}
}

// inputSeqs checks that migration 5 numbered the inputs of insertAtVersion2 by
// creation, then id, and that the next input comes after them.
func (m *schemaCheck) inputSeqs() {
	t, db, now := m.t, m.db, m.now()
	t.Helper()
	ctx := context.Background()
	seqs := map[string]int64{}
	if err := db.QueryRowContext(ctx, `
		INSERT INTO inputs (id, created_at, updated_at, team_id, channel_id, thread_ts, kind, status)
		VALUES ('d', `+now+`, `+now+`, 'T1', 'C1', '1.1', 'user_message', 'pending') RETURNING seq`).Scan(new(int64)); err != nil {
		t.Fatalf("insert an input after Up: %v", err)
	}
	rows, err := db.QueryContext(ctx, `SELECT id, seq FROM inputs`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		var seq int64
		if err := rows.Scan(&id, &seq); err != nil {
			t.Fatal(err)
		}
		seqs[id] = seq
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		t.Fatal(err)
	}
	if want := map[string]int64{"c": 1, "a": 2, "b": 3, "d": 4}; !reflect.DeepEqual(seqs, want) {
		t.Errorf("inputs' seq after Up = %v; want %v", seqs, want)
	}
}

// workflowColumns checks that migration 3 copied the workflow of the conversations of
// insertAtVersion2 out of their state.
func (m *schemaCheck) workflowColumns() {
	t := m.t
	t.Helper()
	rows, err := m.db.QueryContext(context.Background(), `
		SELECT thread_ts, workflow, workflow_status, workflow_started_by FROM conversations ORDER BY thread_ts`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var ts string
		var name, status, startedBy sql.NullString
		if err := rows.Scan(&ts, &name, &status, &startedBy); err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s %v/%q %v/%q %v/%q", ts, name.Valid, name.String, status.Valid, status.String, startedBy.Valid, startedBy.String))
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		t.Fatal(err)
	}
	want := []string{`1.1 true/"retro" true/"running" true/"U1"`, `1.2 false/"" false/"" false/""`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("workflow columns after Up = %q; want %q", got, want)
	}
}

// DeleteIdleCascades checks in the database itself that DeleteIdle leaves no messages
// behind: s, a new, empty store, saves a conversation of two messages and deletes it
// as idle, then db, a connection of its own to s's database, must count no messages.
func DeleteIdleCascades(t *testing.T, s conversation.Store, db *sql.DB) {
	t.Helper()
	ctx := context.Background()
	key := conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1.1"}
	msgs := []conversation.Message{{Role: conversation.RoleUser, Text: "a"}, {Role: conversation.RoleAssistant, Text: "b"}}
	if _, err := s.Save(ctx, conversation.Turn{Key: key, Append: msgs}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.DeleteIdle(ctx, time.Now().Add(time.Hour)); n != 1 || err != nil {
		t.Fatalf("DeleteIdle = %d, %v; want 1, nil", n, err)
	}
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM messages").Scan(&n); err != nil || n != 0 {
		t.Errorf("%d messages left after DeleteIdle (%v); want 0", n, err)
	}
}
