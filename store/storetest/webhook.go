package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
)

// WebhookStore is what RunWebhooks tests: a conversation store with the webhook
// outbox (migration 00009; package webhook's Outbox).
type WebhookStore interface {
	conversation.Store
	ClaimEvents(ctx context.Context, receiver, owner string, ttl time.Duration, limit int) ([]conversation.Event, error)
	EventDone(ctx context.Context, receiver string, seq int64, owner, lastErr string) error
	EventFailed(ctx context.Context, receiver string, seq int64, owner string, retryIn time.Duration, lastErr string) error
	CloseEvents(ctx context.Context, receivers []string) (int, error)
	DeleteEvents(ctx context.Context, before time.Time) (int, error)
}

// Receivers of the webhook tests (package webhook's receiver ids).
const (
	rcv  = "receiver-1"
	rcv2 = "receiver-2"
)

// event returns a webhook event of k with id and type typ.
func event(k conversation.Key, id, typ string) conversation.Event {
	return conversation.Event{Key: k, Data: conversation.EventData{
		ID: id, Type: typ, Time: time.Date(2026, 11, 25, 12, 0, 0, 123456000, time.UTC),
		Run:      conversation.EventRun{Workflow: "proposal", TeamID: k.TeamID, Channel: k.ChannelID, ThreadTS: k.ThreadTS, Status: "running"},
		Artifact: &conversation.EventArtifact{ID: "budget", Revision: 3, Status: "approved"},
		Actor:    &conversation.EventActor{UserID: "U1"},
	}}
}

// ids returns the ids of events, in order.
func ids(events []conversation.Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.Data.ID
	}
	return out
}

func mustClaim(t testing.TB, s WebhookStore, owner string, ttl time.Duration, want ...string) []conversation.Event {
	t.Helper()
	return mustClaimFor(t, s, rcv, owner, ttl, want...)
}

func mustClaimFor(t testing.TB, s WebhookStore, receiver, owner string, ttl time.Duration, want ...string) []conversation.Event {
	t.Helper()
	got, err := s.ClaimEvents(context.Background(), receiver, owner, ttl, 10)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(ids(got)) != fmt.Sprint(want) {
		t.Fatalf("%s claimed %v for %s; want %v", owner, ids(got), receiver, want)
	}
	return got
}

// RunWebhooks runs the conformance suite of the webhook outbox against the stores
// open returns, each on a new, empty database: Save writes a turn's events with the
// turn and only with it; a claim returns the oldest undelivered event of each thread,
// oldest first, and leases it, so that another claim gets it only once the lease
// expired; a thread's next event waits until the one before is delivered; a failed
// delivery counts the attempt, keeps the error and is due again after its delay;
// concurrent claims never return one event twice; DeleteEvents deletes only events
// whose delivery ended.
func RunWebhooks(t *testing.T, open func(t *testing.T) WebhookStore) {
	suite[WebhookStore]{
		{"SaveAndClaim", testWebhookSaveAndClaim},
		{"LeaseLostWritesNone", testWebhookLeaseLostWritesNone},
		{"LeaseExpires", testWebhookLeaseExpires},
		{"StaleClaimFreesNothing", testWebhookStaleClaimFreesNothing},
		{"Failed", testWebhookFailed},
		{"Threads", testWebhookThreads},
		{"DeleteEvents", testWebhookDeleteEvents},
		{"ConcurrentDeliveryKeepsThreadOrder", testWebhookConcurrentDeliveryKeepsThreadOrder},
		{"ConcurrentClaims", testWebhookConcurrentClaims},
		{"ReceiversApart", testWebhookReceiversApart},
	}.run(t, open)
}

// testWebhookSaveAndClaim checks that Save writes a turn's events, that a claim
// leases the oldest undelivered event of the thread and that the next waits for it, and
// that a save that fails writes no event while a stored event id is skipped.
func testWebhookSaveAndClaim(t *testing.T, s WebhookStore) {
	ctx := context.Background()
	saved := mustSave(t, s, conversation.Turn{Key: key, Events: []conversation.Event{
		event(key, "evt_1", conversation.EventRunStarted), event(key, "evt_2", conversation.EventArtifactGenerated)}})
	got := mustClaim(t, s, ownerA, time.Hour, "evt_1")
	want := event(key, "evt_1", conversation.EventRunStarted)
	if g := got[0]; g.Key != key || g.Seq == 0 || g.Attempts != 0 || g.Data.Time != want.Data.Time || g.Data.Type != want.Data.Type ||
		g.Data.Run != want.Data.Run || *g.Data.Artifact != *want.Data.Artifact || *g.Data.Actor != *want.Data.Actor {
		t.Errorf("claimed %+v; want %+v", g, want)
	}
	mustClaim(t, s, ownerB, time.Hour) // evt_1 is leased; evt_2 waits for it
	if err := s.EventDone(ctx, rcv, got[0].Seq, ownerA, ""); err != nil {
		t.Fatal(err)
	}
	second := mustClaim(t, s, ownerB, time.Hour, "evt_2")
	if second[0].Seq <= got[0].Seq {
		t.Errorf("seq %d after %d", second[0].Seq, got[0].Seq)
	}
	// A conflicting or fenced-off save writes no event; a stored id is skipped.
	if _, err := s.Save(ctx, conversation.Turn{Key: key, Version: saved.Version + 1,
		Events: []conversation.Event{event(key, "evt_lost", conversation.EventRunFailed)}}); !errors.Is(err, conversation.ErrConflict) {
		t.Fatalf("stale Save: %v; want ErrConflict", err)
	}
	mustSave(t, s, conversation.Turn{Key: key, Version: saved.Version,
		Events: []conversation.Event{event(key, "evt_2", conversation.EventArtifactGenerated), event(key, "evt_3", conversation.EventRunCompleted)}})
	if err := s.EventDone(ctx, rcv, second[0].Seq, ownerB, ""); err != nil {
		t.Fatal(err)
	}
	mustClaim(t, s, ownerA, time.Hour, "evt_3")
}

// testWebhookLeaseLostWritesNone checks that a Save under a lease taken over writes no
// event.
func testWebhookLeaseLostWritesNone(t *testing.T, s WebhookStore) {
	ctx := context.Background()
	old := mustAcquire(t, s, key, ownerA, expiredTTL)
	takeOver(t, s, key, ownerB)
	if _, err := s.Save(ctx, conversation.Turn{Key: key, Lease: old,
		Events: []conversation.Event{event(key, "evt_x", conversation.EventRunStarted)}}); !errors.Is(err, conversation.ErrLeaseLost) {
		t.Fatalf("Save under a lost lease: %v; want ErrLeaseLost", err)
	}
	mustClaim(t, s, ownerA, time.Hour)
}

// testWebhookLeaseExpires checks that another claim gets an event once the lease of
// the claim before expired.
func testWebhookLeaseExpires(t *testing.T, s WebhookStore) {
	mustSave(t, s, conversation.Turn{Key: key, Events: []conversation.Event{event(key, "evt_1", conversation.EventRunStarted)}})
	mustClaim(t, s, ownerA, 0, "evt_1") // a claim that expired at once: its holder died
	mustClaim(t, s, ownerB, time.Hour, "evt_1")
	mustClaim(t, s, ownerA, time.Hour)
}

// testWebhookStaleClaimFreesNothing checks that the outcome reported by a claim whose
// lease expired changes nothing of the claim that took the event over.
func testWebhookStaleClaimFreesNothing(t *testing.T, s WebhookStore) {
	ctx := context.Background()
	mustSave(t, s, conversation.Turn{Key: key, Events: []conversation.Event{
		event(key, "evt_1", conversation.EventRunStarted), event(key, "evt_2", conversation.EventRunCompleted)}})
	stale := mustClaim(t, s, ownerA, 0, "evt_1") // its holder stalled past the lease
	mustClaim(t, s, ownerB, time.Hour, "evt_1")  // and another replica sends it now
	// The stalled holder's outcome does not free ownerB's claim: nobody else
	// sends the event while ownerB does, and the thread's next event waits.
	if err := s.EventFailed(ctx, rcv, stale[0].Seq, ownerA, 0, "timeout"); err != nil {
		t.Fatal(err)
	}
	mustClaim(t, s, "owner-c", time.Hour)
	if err := s.EventDone(ctx, rcv, stale[0].Seq, ownerA, ""); err != nil {
		t.Fatal(err)
	}
	mustClaim(t, s, "owner-c", time.Hour)
}

// testWebhookFailed checks that a failed delivery counts the attempt, keeps the
// error and makes the event due again after its delay, and only for the event's last
// claim.
func testWebhookFailed(t *testing.T, s WebhookStore) {
	ctx := context.Background()
	mustSave(t, s, conversation.Turn{Key: key, Events: []conversation.Event{event(key, "evt_1", conversation.EventRunStarted)}})
	got := mustClaim(t, s, ownerA, time.Hour, "evt_1")
	if err := s.EventFailed(ctx, rcv, got[0].Seq, ownerA, 0, "503 Service Unavailable"); err != nil {
		t.Fatal(err)
	}
	got = mustClaim(t, s, ownerB, time.Hour, "evt_1")
	if err := s.EventFailed(ctx, rcv, got[0].Seq, ownerB, time.Hour, "connection refused"); err != nil {
		t.Fatal(err)
	}
	mustClaim(t, s, ownerA, time.Hour) // not due for an hour
	if err := s.EventFailed(ctx, rcv, got[0].Seq, ownerB, 0, "again"); err != nil {
		t.Fatal(err)
	}
	mustClaim(t, s, ownerA, time.Hour) // that claim had ended: nothing changed
	if got[0].Attempts != 1 || got[0].LastError != "503 Service Unavailable" {
		t.Errorf("attempts %d, last error %q; want 1, 503 Service Unavailable", got[0].Attempts, got[0].LastError)
	}
}

// testWebhookThreads checks that one claim returns the head event of each thread.
func testWebhookThreads(t *testing.T, s WebhookStore) {
	a, b := thread("a"), thread("b")
	mustSave(t, s, conversation.Turn{Key: a, Events: []conversation.Event{event(a, "evt_a1", conversation.EventRunStarted), event(a, "evt_a2", conversation.EventRunCompleted)}})
	mustSave(t, s, conversation.Turn{Key: b, Events: []conversation.Event{event(b, "evt_b1", conversation.EventRunStarted)}})
	got := mustClaim(t, s, ownerA, time.Hour, "evt_a1", "evt_b1")
	if got[0].Key != a || got[1].Key != b {
		t.Errorf("keys %v, %v", got[0].Key, got[1].Key)
	}
}

// testWebhookDeleteEvents checks that DeleteEvents deletes only the events whose
// delivery ended before the time it is given.
func testWebhookDeleteEvents(t *testing.T, s WebhookStore) {
	ctx := context.Background()
	mustSave(t, s, conversation.Turn{Key: key, Events: []conversation.Event{
		event(key, "evt_1", conversation.EventRunStarted), event(key, "evt_2", conversation.EventRunCompleted)}})
	got := mustClaim(t, s, ownerA, time.Hour, "evt_1")
	if err := s.EventDone(ctx, rcv, got[0].Seq, ownerA, ""); err != nil {
		t.Fatal(err)
	}
	if n, err := s.CloseEvents(ctx, []string{rcv}); err != nil || n != 1 {
		t.Fatalf("CloseEvents = %d, %v; want 1", n, err)
	}
	if n, err := s.DeleteEvents(ctx, time.Now().Add(-time.Hour)); err != nil || n != 0 {
		t.Fatalf("DeleteEvents before the delivery = %d, %v; want 0", n, err)
	}
	if n, err := s.DeleteEvents(ctx, time.Now().Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("DeleteEvents = %d, %v; want 1 (the undelivered event stays)", n, err)
	}
	mustClaim(t, s, ownerA, time.Hour, "evt_2")
}

// testWebhookConcurrentDeliveryKeepsThreadOrder checks that replicas claiming and
// delivering at once never have two events of one thread in flight, and deliver each
// thread's events in order.
func testWebhookConcurrentDeliveryKeepsThreadOrder(t *testing.T, s WebhookStore) {
	ctx := context.Background()
	const threads, perThread = 6, 4
	for i := range threads {
		k := thread(fmt.Sprint("o", i))
		var evs []conversation.Event
		for j := range perThread {
			evs = append(evs, event(k, fmt.Sprintf("evt_%d_%d", i, j), conversation.EventArtifactApproved))
		}
		mustSave(t, s, conversation.Turn{Key: k, Events: evs})
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		inFlight = map[conversation.Key]string{}
		order    = map[conversation.Key][]string{}
		done     int
		errs     []error
	)
	for _, owner := range []string{"r1", "r2", "r3"} {
		wg.Go(func() {
			for range 200 {
				mu.Lock()
				finished := done == threads*perThread || len(errs) > 0
				mu.Unlock()
				if finished {
					return
				}
				got, err := s.ClaimEvents(ctx, rcv, owner, time.Hour, 4)
				if err != nil && !errors.Is(err, conversation.ErrUnavailable) {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
				mu.Lock()
				for _, e := range got {
					if other, ok := inFlight[e.Key]; ok {
						errs = append(errs, fmt.Errorf("%s claimed %s while %s of its thread is in flight", owner, e.Data.ID, other))
					}
					inFlight[e.Key] = e.Data.ID
				}
				mu.Unlock()
				for _, e := range got {
					mu.Lock()
					delete(inFlight, e.Key)
					order[e.Key] = append(order[e.Key], e.Data.ID)
					done++
					mu.Unlock()
					if err := s.EventDone(ctx, rcv, e.Seq, owner, ""); err != nil {
						mu.Lock()
						errs = append(errs, err)
						mu.Unlock()
					}
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for i := range threads {
		k := thread(fmt.Sprint("o", i))
		var want []string
		for j := range perThread {
			want = append(want, fmt.Sprintf("evt_%d_%d", i, j))
		}
		if fmt.Sprint(order[k]) != fmt.Sprint(want) {
			t.Errorf("thread %d delivered %v; want %v", i, order[k], want)
		}
	}
}

// testWebhookConcurrentClaims checks that concurrent claims never return one event
// twice.
func testWebhookConcurrentClaims(t *testing.T, s WebhookStore) {
	ctx := context.Background()
	const threads = 20
	for i := range threads {
		k := thread(fmt.Sprint(i))
		mustSave(t, s, conversation.Turn{Key: k, Events: []conversation.Event{event(k, fmt.Sprintf("evt_%d", i), conversation.EventRunStarted)}})
	}
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		seen   = map[string]int{}
		errs   []error
		owners = []string{"w1", "w2", "w3", "w4"}
	)
	for _, owner := range owners {
		wg.Go(func() {
			for range threads {
				got, err := s.ClaimEvents(ctx, rcv, owner, time.Hour, 3)
				mu.Lock()
				if err != nil && !errors.Is(err, conversation.ErrUnavailable) {
					errs = append(errs, err)
				}
				for _, e := range got {
					seen[e.Data.ID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for i := range threads {
		if id := fmt.Sprintf("evt_%d", i); seen[id] != 1 {
			t.Errorf("%s claimed %d times; want once", id, seen[id])
		}
	}
}

// testWebhookReceiversApart checks that each receiver's delivery is its own: a
// receiver whose delivery failed holds back only its own next event, with its own
// attempts and delay, while another receiver's delivery moves on; and that an event
// ends (CloseEvents) only once its delivery ended for every receiver.
func testWebhookReceiversApart(t *testing.T, s WebhookStore) {
	ctx := context.Background()
	mustSave(t, s, conversation.Turn{Key: key, Events: []conversation.Event{
		event(key, "evt_1", conversation.EventRunStarted), event(key, "evt_2", conversation.EventRunCompleted)}})
	failing := mustClaimFor(t, s, rcv, ownerA, time.Hour, "evt_1")
	healthy := mustClaimFor(t, s, rcv2, ownerB, time.Hour, "evt_1")
	if err := s.EventFailed(ctx, rcv, failing[0].Seq, ownerA, 0, "503 Service Unavailable"); err != nil {
		t.Fatal(err)
	}
	if err := s.EventDone(ctx, rcv2, healthy[0].Seq, ownerB, ""); err != nil {
		t.Fatal(err)
	}
	if n, err := s.CloseEvents(ctx, []string{rcv, rcv2}); err != nil || n != 0 {
		t.Fatalf("CloseEvents with a receiver still failing = %d, %v; want 0", n, err)
	}
	if n, err := s.CloseEvents(ctx, nil); err != nil || n != 0 {
		t.Fatalf("CloseEvents without receivers = %d, %v; want 0", n, err)
	}
	again := mustClaimFor(t, s, rcv, ownerA, time.Hour, "evt_1")
	if again[0].Attempts != 1 || again[0].LastError != "503 Service Unavailable" {
		t.Errorf("receiver 1's retry: attempts %d, error %q; want 1 and its own error", again[0].Attempts, again[0].LastError)
	}
	if err := s.EventFailed(ctx, rcv, again[0].Seq, ownerA, time.Hour, "timeout"); err != nil {
		t.Fatal(err)
	}
	mustClaimFor(t, s, rcv, ownerA, time.Hour) // waiting out its own delay; evt_2 waits behind it
	next := mustClaimFor(t, s, rcv2, ownerB, time.Hour, "evt_2")
	if next[0].Attempts != 0 {
		t.Errorf("receiver 2's evt_2 attempts %d; want 0", next[0].Attempts)
	}
	if err := s.EventDone(ctx, rcv2, next[0].Seq, ownerB, ""); err != nil {
		t.Fatal(err)
	}
	mustClaimFor(t, s, rcv2, ownerB, time.Hour) // each event delivered once: nothing left
	if n, err := s.CloseEvents(ctx, []string{rcv2}); err != nil || n != 2 {
		t.Fatalf("CloseEvents for receiver 2 alone = %d, %v; want 2", n, err)
	}
}
