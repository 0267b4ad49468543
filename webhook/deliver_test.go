package webhook_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/threadwright/threadwright/agents/web"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/sqlite"
	"github.com/threadwright/threadwright/webhook"
)

func openStore(t *testing.T) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func ev(k conversation.Key, id, typ string) conversation.Event {
	return conversation.Event{Key: k, Data: conversation.EventData{ID: id, Type: typ, Time: time.Now(),
		Run: conversation.EventRun{Workflow: "proposal", TeamID: k.TeamID, Channel: k.ChannelID, ThreadTS: k.ThreadTS, Status: "running"}}}
}

// TestDeliverer: a thread's events arrive in order, the second only once the first
// was accepted (a 500 holds it back and it is retried); another thread's are not
// held back; the request is signed.
func TestDeliverer(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	a := conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1.1"}
	b := conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "2.2"}
	if _, err := st.Save(ctx, conversation.Turn{Key: a, Events: []conversation.Event{ev(a, "evt_a1", "run.started"), ev(a, "evt_a2", "run.completed")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Save(ctx, conversation.Turn{Key: b, Events: []conversation.Event{ev(b, "evt_b1", "run.started")}}); err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		got   []string
		fails = map[string]int{"evt_a1": 2} // the first two tries of a1 fail
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := webhook.Verify("s3cret", r.Header, body, time.Now(), time.Minute); err != nil {
			t.Errorf("verify: %v", err)
		}
		var e conversation.EventData
		_ = json.Unmarshal(body, &e)
		mu.Lock()
		defer mu.Unlock()
		got = append(got, e.ID)
		if fails[e.ID] > 0 {
			fails[e.ID]--
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	client, err := web.GuardedClient(web.FetchConfig{AllowHosts: []string{"127.0.0.1"}}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	d, err := webhook.New(webhook.Config{URLs: []string{srv.URL + "/hook"}, Secret: "s3cret", Outbox: st, Client: client,
		Owner: "test", FirstBackoff: time.Millisecond, MaxBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for range 50 {
		if _, err := d.Once(ctx); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n == 5 {
			break
		}
		// Wait for the failed event to be due again (1 ms), on the outbox's own answer.
		for {
			evs, err := st.ClaimEvents(ctx, webhook.ReceiverID(srv.URL+"/hook"), "peek", 0, 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) > 0 {
				break
			}
			select {
			case <-ctx.Done():
			case <-time.After(time.Millisecond):
			}
		}
	}
	// Threads a and b are sent at once: only each thread's order is fixed.
	var inA, inB []string
	for _, id := range got {
		if strings.HasPrefix(id, "evt_a") {
			inA = append(inA, id)
		} else {
			inB = append(inB, id)
		}
	}
	if g, want := strings.Join(inA, " "), "evt_a1 evt_a1 evt_a1 evt_a2"; g != want {
		t.Errorf("thread a's requests %s; want %s (all: %v)", g, want, got)
	}
	if g := strings.Join(inB, " "); g != "evt_b1" || slices.Index(got, "evt_b1") > 1 {
		t.Errorf("thread b's requests %s; want evt_b1, not held back by a (all: %v)", g, got)
	}
}

// TestDelivererRefusesLoopback: fetch_url's address rules apply without an allow-list
// entry: the event is not sent, and its error is recorded.
func TestDelivererRefusesLoopback(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	k := conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1.1"}
	if _, err := st.Save(ctx, conversation.Turn{Key: k, Events: []conversation.Event{ev(k, "evt_1", "run.started")}}); err != nil {
		t.Fatal(err)
	}
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()
	client, err := web.GuardedClient(web.FetchConfig{}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	d, err := webhook.New(webhook.Config{URLs: []string{srv.URL}, Secret: "s3cret", Outbox: st, Client: client, Owner: "test",
		FirstBackoff: time.Millisecond, MaxBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Once(ctx); err != nil {
		t.Fatal(err)
	}
	var evs []conversation.Event
	for len(evs) == 0 { // due again after 1 ms
		if evs, err = st.ClaimEvents(ctx, webhook.ReceiverID(srv.URL), "peek", 0, 10); err != nil {
			t.Fatal(err)
		}
	}
	if e := evs[0]; hits.Load() != 0 || e.Attempts != 1 || !strings.Contains(e.LastError, "loopback addresses are not allowed") {
		t.Fatalf("hits %d, attempts %d, last error %q", hits.Load(), e.Attempts, e.LastError)
	}
}

// ttlOutbox records the lease of each claim.
type ttlOutbox struct {
	*sqlite.Store
	mu   sync.Mutex
	ttls []time.Duration
}

func (o *ttlOutbox) ClaimEvents(ctx context.Context, receiver, owner string, ttl time.Duration, limit int) ([]conversation.Event, error) {
	o.mu.Lock()
	o.ttls = append(o.ttls, ttl)
	o.mu.Unlock()
	return o.Store.ClaimEvents(ctx, receiver, owner, ttl, limit)
}

// slowLinks answers chat.getPermalink only when its context ends.
type slowLinks struct{}

func (slowLinks) Permalink(ctx context.Context, _ conversation.Key, _ string) (string, error) {
	<-ctx.Done()
	return "", ctx.Err()
}

// TestDelivererLeaseCoversTheSend: a claim's lease (one per receiver) outlasts the
// longest send, the permalink's lookup (up to Timeout) and the receiver's request
// (Timeout), so no other replica takes the delivery while it is still being sent.
func TestDelivererLeaseCoversTheSend(t *testing.T) {
	ctx := context.Background()
	o := &ttlOutbox{Store: openStore(t)}
	k := conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1.1"}
	if _, err := o.Save(ctx, conversation.Turn{Key: k, Events: []conversation.Event{ev(k, "evt_1", "run.started")}}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	defer srv.Close()
	const timeout = time.Minute
	d, err := webhook.New(webhook.Config{URLs: []string{srv.URL + "/a", srv.URL + "/b"}, Secret: "s3cret", Outbox: o, Client: srv.Client(),
		Owner: "r1", Permalinks: slowLinks{}, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel() // the claim is what matters, not the send
	_, _ = d.Once(cctx)
	if len(o.ttls) != 2 || min(o.ttls[0], o.ttls[1]) <= 2*timeout {
		t.Errorf("leases %v; want two, each more than %v (a permalink lookup and a request)", o.ttls, 2*timeout)
	}
}
