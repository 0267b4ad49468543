package storetest

import (
	"context"
	"database/sql"
	"io/fs"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/internal/sqlstore"
)

// MigrationsDown applies to db, in dialect, every migration in the directory
// migrations/ of fsys (where a backend embeds its schema), rolls them all back and
// applies them again, so that each Down is known to run, and to undo its Up:
// inputs.claimed_until, which migration 2 adds, must exist after each Up and not after
// going down to version 1. hasColumn reports whether table has column in db.
func MigrationsDown(t *testing.T, dialect goose.Dialect, db *sql.DB, fsys fs.FS, hasColumn func(t *testing.T, table, column string) bool) {
	t.Helper()
	ctx := context.Background()
	p, err := sqlstore.Migrations(dialect, db, fsys)
	if err != nil {
		t.Fatal(err)
	}
	claimedUntil := func() bool { return hasColumn(t, "inputs", "claimed_until") }
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("Up: %v", err)
	}
	if !claimedUntil() {
		t.Error("no inputs.claimed_until after Up")
	}
	if _, err := p.DownTo(ctx, 1); err != nil {
		t.Fatalf("down to 1: %v", err)
	}
	if claimedUntil() {
		t.Error("inputs.claimed_until left after down to 1")
	}
	if _, err := p.DownTo(ctx, 0); err != nil {
		t.Fatalf("down to 0: %v", err)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("Up again: %v", err)
	}
	if !claimedUntil() {
		t.Error("no inputs.claimed_until after Up again")
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
