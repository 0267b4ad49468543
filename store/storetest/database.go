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
// migration 3 adds, and the knowledge base's tables sources and chunks, which
// migration 4 adds, must exist after each Up, and not after going down past their
// migration. It also checks that migration 3 copies the workflow of the
// conversations saved before it out of their state. hasColumn reports whether table
// has column in db.
func MigrationsDown(t *testing.T, dialect goose.Dialect, db *sql.DB, fsys fs.FS, hasColumn func(t *testing.T, table, column string) bool) {
	t.Helper()
	ctx := context.Background()
	p, err := sqlstore.Migrations(dialect, db, fsys)
	if err != nil {
		t.Fatal(err)
	}
	columns := func(when string, claimedUntil, workflowStatus bool) {
		t.Helper()
		if got := hasColumn(t, "inputs", "claimed_until"); got != claimedUntil {
			t.Errorf("%s: inputs.claimed_until exists: %v; want %v", when, got, claimedUntil)
		}
		if got := hasColumn(t, "conversations", "workflow_status"); got != workflowStatus {
			t.Errorf("%s: conversations.workflow_status exists: %v; want %v", when, got, workflowStatus)
		}
	}
	knowledge := func(when string, want bool) {
		t.Helper()
		for _, c := range [][2]string{{"sources", "hash"}, {"chunks", "text"}} {
			if got := hasColumn(t, c[0], c[1]); got != want {
				t.Errorf("%s: %s.%s exists: %v; want %v", when, c[0], c[1], got, want)
			}
		}
	}

	// Conversations saved at version 2, before their workflow had columns.
	if _, err := p.UpTo(ctx, 2); err != nil {
		t.Fatalf("up to 2: %v", err)
	}
	now := "0" // SQLite's INTEGER Unix microseconds
	if dialect == goose.DialectPostgres {
		now = "now()"
	}
	if _, err := db.ExecContext(ctx, `
		INSERT INTO conversations (team_id, channel_id, thread_ts, state, version, last_seq, created_at, updated_at)
		VALUES ('T1', 'C1', '1.1', '{"mode": "workflow", "turns": 1, "workflow": {"name": "retro", "started_by": "U1", "locale": "en", "status": "running", "artifacts": {}}}', 1, 0, `+now+`, `+now+`),
			('T1', 'C1', '1.2', '{"mode": "assistant", "turns": 1}', 1, 0, `+now+`, `+now+`)`); err != nil {
		t.Fatalf("insert conversations at version 2: %v", err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("Up: %v", err)
	}
	columns("after Up", true, true)
	knowledge("after Up", true)
	rows, err := db.QueryContext(ctx, `
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

	if _, err := p.DownTo(ctx, 3); err != nil {
		t.Fatalf("down to 3: %v", err)
	}
	columns("after down to 3", true, true)
	knowledge("after down to 3", false)
	if _, err := p.DownTo(ctx, 2); err != nil {
		t.Fatalf("down to 2: %v", err)
	}
	columns("after down to 2", true, false)
	if _, err := p.DownTo(ctx, 1); err != nil {
		t.Fatalf("down to 1: %v", err)
	}
	columns("after down to 1", false, false)
	if _, err := p.DownTo(ctx, 0); err != nil {
		t.Fatalf("down to 0: %v", err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("Up again: %v", err)
	}
	columns("after Up again", true, true)
	knowledge("after Up again", true)
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
