package postgres_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
	"github.com/threadwright/threadwright/store/postgres"
	"github.com/threadwright/threadwright/store/storetest"
)

// mustOpen opens a store in a schema of its own and closes it when the test ends.
func mustOpen(tb testing.TB) *postgres.Store {
	tb.Helper()
	return mustOpenDSN(tb, storetest.PostgresDSN(tb))
}

// mustOpenDSN opens a store on the database that dsn names and closes it when the test
// ends.
func mustOpenDSN(tb testing.TB, dsn string) *postgres.Store {
	tb.Helper()
	s, err := postgres.Open(context.Background(), dsn, 0)
	return storetest.Opened(tb, s, err)
}

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) conversation.Store { return mustOpen(t) })
}

func TestKnowledge(t *testing.T) {
	storetest.RunKnowledge(t, func(t *testing.T) conversation.Knowledge { return mustOpen(t) })
}

func BenchmarkKnowledgeSearch(b *testing.B) {
	storetest.BenchKnowledgeSearch(b, func(b *testing.B) conversation.Knowledge { return mustOpen(b) })
}

func TestMigrate(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.PostgresDSN(t)
	v, err := postgres.Migrate(ctx, dsn)
	if err != nil || v < 1 {
		t.Fatalf("Migrate = %d, %v; want a version, nil", v, err)
	}
	if v2, err := postgres.Migrate(ctx, dsn); v2 != v || err != nil {
		t.Errorf("second Migrate = %d, %v; want %d, nil", v2, err, v)
	}
}

// TestConcurrentOpen opens several stores on one new schema at once, as replicas
// starting together do: the migration lock lets one migrate and the others find the
// schema up to date.
func TestConcurrentOpen(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	errs := make(chan error, 4)
	for range cap(errs) {
		go func() {
			s, err := postgres.Open(context.Background(), dsn, 0)
			if err == nil {
				err = s.Close()
			}
			errs <- err
		}()
	}
	for range cap(errs) {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestDeleteIdleCascades checks in the database itself that DeleteIdle leaves no
// messages behind.
func TestDeleteIdleCascades(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	s := mustOpenDSN(t, dsn)
	db, err := sql.Open("postgres", dsn)
	storetest.DeleteIdleCascades(t, s, storetest.Opened(t, db, err))
}

func BenchmarkSaveLoad(b *testing.B) {
	storetest.BenchSaveLoad(b, func(b *testing.B) conversation.Store { return mustOpen(b) })
}

func BenchmarkLeasedTurn(b *testing.B) {
	storetest.BenchLeasedTurn(b, func(b *testing.B) conversation.Store { return mustOpen(b) })
}

func BenchmarkConcurrentTurns(b *testing.B) {
	storetest.BenchConcurrentTurns(b, func(b *testing.B) conversation.Store { return mustOpen(b) })
}

// BenchmarkCountPending measures Submit's count of pending inputs (see
// storetest.BenchCountPending).
func BenchmarkCountPending(b *testing.B) {
	storetest.BenchCountPending(b, func(b *testing.B) conversation.Store { return mustOpen(b) })
}

// BenchmarkComparison runs storetest.BenchComparison with the floor of a turn on this
// server, measured in the same run: a durable commit of a 1 KB row (INSERT, autocommit)
// and a read of the newest 20 rows, in a table of their own.
func BenchmarkComparison(b *testing.B) {
	db, err := sql.Open("postgres", storetest.PostgresDSN(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	ctx := context.Background()
	table := fmt.Sprintf("floor_%d", time.Now().UnixNano())
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+table+" (id bigserial PRIMARY KEY, body text NOT NULL)"); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _, _ = db.Exec("DROP TABLE " + table) })
	body := strings.Repeat("x", 1024)
	floor := func(ctx context.Context) error {
		if _, err := db.ExecContext(ctx, "INSERT INTO "+table+" (body) VALUES ($1)", body); err != nil {
			return err
		}
		rows, err := db.QueryContext(ctx, "SELECT id, body FROM "+table+" ORDER BY id DESC LIMIT 20")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			var s string
			if err := rows.Scan(&id, &s); err != nil {
				return err
			}
		}
		return rows.Err()
	}
	storetest.BenchComparison(b, func(b *testing.B) conversation.Store { return mustOpen(b) }, floor)
}

// TestSaveWaitsForInput checks the locking of Save's single statement: a Save for an
// input that another transaction is updating waits for it, then marks the input done
// if it is still pending (keeping the other transaction's change), and writes nothing
// if it is not.
func TestSaveWaitsForInput(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.PostgresDSN(t)
	s := mustOpenDSN(t, dsn)
	db, err := sql.Open("postgres", dsn)
	storetest.Opened(t, db, err)
	key := conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1.1"}
	saved, err := s.Save(ctx, conversation.Turn{Key: key})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id, update string
		wantErr    bool
	}{
		{"begun", `UPDATE inputs SET attempts = attempts + 1, updated_at = now() WHERE id = $1`, false},
		{"finished", `UPDATE inputs SET status = 'failed' WHERE id = $1`, true},
		{"deleted", `DELETE FROM inputs WHERE id = $1`, true},
	} {
		t.Run(tc.id, func(t *testing.T) {
			in := conversation.Input{ID: tc.id, Key: key, Kind: conversation.KindUserMessage}
			if ok, err := s.Enqueue(ctx, in); !ok || err != nil {
				t.Fatalf("Enqueue = %v, %v", ok, err)
			}
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			if _, err := tx.ExecContext(ctx, tc.update, tc.id); err != nil {
				t.Fatal(err)
			}
			type result struct {
				saved conversation.Saved
				err   error
			}
			done := make(chan result, 1)
			go func() {
				sv, err := s.Save(ctx, conversation.Turn{Key: key, Version: saved.Version, InputID: tc.id,
					Append: []conversation.Message{{Role: conversation.RoleUser, Text: tc.id}}})
				done <- result{sv, err}
			}()
			select {
			case r := <-done:
				t.Fatalf("Save returned (%+v, %v) while the input was locked; want it to wait", r.saved, r.err)
			case <-time.After(200 * time.Millisecond):
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			r := <-done
			cp, err := s.Load(ctx, key, 100)
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantErr {
				if !errors.Is(r.err, conversation.ErrConflict) {
					t.Errorf("Save = %v; want ErrConflict", r.err)
				}
				if cp.Conversation.Version != saved.Version {
					t.Errorf("conversation at version %d after a failed Save; want %d", cp.Conversation.Version, saved.Version)
				}
				return
			}
			if r.err != nil {
				t.Fatalf("Save: %v", r.err)
			}
			saved = r.saved
			if cp.Conversation.Version != saved.Version || cp.Messages[len(cp.Messages)-1].Text != tc.id {
				t.Errorf("after Save: version %d, messages %+v; want version %d ending with %q", cp.Conversation.Version, cp.Messages, saved.Version, tc.id)
			}
			var status string
			var attempts int
			if err := db.QueryRowContext(ctx, `SELECT status, attempts FROM inputs WHERE id = $1`, tc.id).Scan(&status, &attempts); err != nil {
				t.Fatal(err)
			}
			if status != "done" || attempts != 1 {
				t.Errorf("input = %s, %d attempts; want done, 1", status, attempts)
			}
		})
	}
}

// TestConcurrentSavesOfOneInput races Saves of one input to different conversations:
// the input is answered once.
func TestConcurrentSavesOfOneInput(t *testing.T) {
	ctx := context.Background()
	s := mustOpen(t)
	key := func(i int) conversation.Key {
		return conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: fmt.Sprintf("1.%d", i)}
	}
	if ok, err := s.Enqueue(ctx, conversation.Input{ID: "in", Key: key(0), Kind: conversation.KindUserMessage}); !ok || err != nil {
		t.Fatalf("Enqueue = %v, %v", ok, err)
	}
	const n = 8
	errs := make(chan error, n)
	for i := range n {
		go func() {
			_, err := s.Save(ctx, conversation.Turn{Key: key(i), InputID: "in",
				Append: []conversation.Message{{Role: conversation.RoleUser, Text: "x"}}})
			errs <- err
		}()
	}
	wins := 0
	for range n {
		switch err := <-errs; {
		case err == nil:
			wins++
		case !errors.Is(err, conversation.ErrConflict):
			t.Errorf("a losing Save failed with %v; want ErrConflict", err)
		}
	}
	created := 0
	for i := range n {
		if ok, err := s.Exists(ctx, key(i)); err != nil {
			t.Fatal(err)
		} else if ok {
			created++
		}
	}
	if wins != 1 || created != 1 {
		t.Errorf("%d Saves won and %d conversations exist; want 1 and 1", wins, created)
	}
}

// TestReplicas runs the tests of several stores on one schema, as replicas of the bot
// use it: of concurrent Acquires of one thread exactly one wins, by the lease row's
// lock, and a Release never strands an input enqueued on another replica.
func TestReplicas(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	storetest.RunReplicas(t, func(t *testing.T) conversation.Store { return mustOpenDSN(t, dsn) })
}

// TestSaveHOT checks that Save's UPDATE of a conversation stays a HOT update (no new
// index entries) on every turn that neither starts nor ends a workflow, with a running
// workflow or without one: the workflow columns that conversations_workflows indexes
// keep their values, and the index leaves out updated_at (migration 00003). The counts
// come from the server's statistics, which a backend reports when its connection
// closes.
func TestSaveHOT(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.PostgresDSN(t)
	s, err := postgres.Open(ctx, dsn, 0)
	if err != nil {
		t.Fatal(err)
	}
	const turns = 5
	wf := &workflow.State{Name: "proposal", StartedBy: "U1", Locale: "en", Status: workflow.RunRunning}
	for _, state := range []conversation.State{
		{Mode: conversation.ModeAssistant},
		{Mode: conversation.ModeWorkflow, Workflow: wf},
	} {
		key := conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1." + state.Mode}
		var version int64
		for i := range turns + 1 {
			state.Turns = i
			saved, err := s.Save(ctx, conversation.Turn{Key: key, Version: version, State: state,
				Append: []conversation.Message{{Role: conversation.RoleUser, Text: "hi"}}})
			if err != nil {
				t.Fatal(err)
			}
			version = saved.Version
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("postgres", dsn)
	storetest.Opened(t, db, err)
	var updates, hot int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if err := db.QueryRowContext(ctx, `
			SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relid = 'conversations'::regclass`,
		).Scan(&updates, &hot); err != nil {
			t.Fatal(err)
		}
		if updates >= 2*turns {
			break
		}
	}
	if updates != 2*turns || hot != updates {
		t.Errorf("%d updates of conversations, %d of them HOT; want %d, all HOT", updates, hot, 2*turns)
	}
}

// TestLeaseHOT checks that the updates of a held lease's row that come often, Renew
// (every few seconds for every held lease) and Enqueue's and Signal's signals, stay
// HOT updates (no new index entries): they change no column that leases_owner or the
// primary key indexes (migration 00005). The counts come from the server's statistics,
// which a backend reports when its connection closes.
func TestLeaseHOT(t *testing.T) {
	ctx := context.Background()
	dsn := storetest.PostgresDSN(t)
	s, err := postgres.Open(ctx, dsn, 0)
	if err != nil {
		t.Fatal(err)
	}
	const threads, renewals = 3, 5
	for i := range threads {
		key := conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: fmt.Sprintf("1.%d", i)}
		if _, _, ok, err := s.Acquire(ctx, key, "owner", time.Minute); !ok || err != nil {
			t.Fatalf("Acquire = %v, %v", ok, err)
		}
		in := conversation.Input{ID: key.ThreadTS, Key: key, Kind: conversation.KindUserMessage,
			Message: &conversation.UserMessage{UserID: "U1", Text: "hi"}}
		if ok, err := s.Enqueue(ctx, in); !ok || err != nil {
			t.Fatalf("Enqueue = %v, %v", ok, err)
		}
		if err := s.Signal(ctx, key, conversation.StopRequest{Target: in.ID, By: "U1"}); err != nil {
			t.Fatal(err)
		}
	}
	for range renewals {
		if states, err := s.Renew(ctx, "owner", time.Minute); len(states) != threads || err != nil {
			t.Fatalf("Renew = %d leases, %v; want %d", len(states), err, threads)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("postgres", dsn)
	storetest.Opened(t, db, err)
	want := threads * (2 + renewals) // an Enqueue, a Signal and the renewals each
	var updates, hot int
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if err := db.QueryRowContext(ctx, `
			SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relid = 'leases'::regclass`,
		).Scan(&updates, &hot); err != nil {
			t.Fatal(err)
		}
		if updates >= want {
			break
		}
	}
	if updates != want || hot != updates {
		t.Errorf("%d updates of leases, %d of them HOT; want %d, all HOT", updates, hot, want)
	}
}

func TestSecrets(t *testing.T) {
	storetest.RunSecrets(t, func(t *testing.T) (storetest.Secrets, storetest.Secrets) {
		dsn := storetest.PostgresDSN(t)
		return mustOpenDSN(t, dsn), mustOpenDSN(t, dsn)
	})
}

func TestFeedback(t *testing.T) {
	storetest.RunFeedback(t, func(t *testing.T) storetest.FeedbackStore { return mustOpen(t) })
}

func TestUsage(t *testing.T) {
	storetest.RunUsage(t, func(t *testing.T) storetest.UsageStore { return mustOpen(t) })
}

func TestWebhooks(t *testing.T) {
	storetest.RunWebhooks(t, func(t *testing.T) storetest.WebhookStore { return mustOpen(t) })
}

// TestUndecodable: an input whose payload no longer decodes (here one of another
// shape, as a newer version might write; jsonb holds no corrupt JSON) is begun and
// named, so that its holder fails it and goes on (storetest.Undecodable).
func TestUndecodable(t *testing.T) {
	storetest.Undecodable(t, func(t *testing.T) (conversation.Store, func(t *testing.T, id string)) {
		dsn := storetest.PostgresDSN(t)
		s := mustOpenDSN(t, dsn)
		db, err := sql.Open("postgres", dsn)
		storetest.Opened(t, db, err)
		return s, func(t *testing.T, id string) {
			if _, err := db.Exec(`UPDATE inputs SET payload = '{"text": 5}' WHERE id = $1`, id); err != nil {
				t.Fatal(err)
			}
		}
	})
}
