package webhook_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/threadwright/threadwright/agents/web"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/webhook"
)

// receiver is an httptest webhook receiver that verifies the signature with its own
// secret, checks that another receiver's secret does not verify the request, and
// records the events it accepted; while down it answers 503.
type receiver struct {
	t             *testing.T
	secret, other string
	down          atomic.Bool
	failed        atomic.Int32

	mu  sync.Mutex
	got []string
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	now := time.Now()
	if err := webhook.Verify(rc.secret, r.Header, body, now, time.Minute); err != nil {
		rc.t.Errorf("verify with the receiver's own secret: %v", err)
	}
	if err := webhook.Verify(rc.other, r.Header, body, now, time.Minute); err == nil {
		rc.t.Error("another receiver's secret verifies this receiver's event")
	}
	if rc.down.Load() {
		rc.failed.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	var e conversation.EventData
	_ = json.Unmarshal(body, &e)
	rc.mu.Lock()
	rc.got = append(rc.got, e.ID)
	rc.mu.Unlock()
}

func (rc *receiver) events() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.got)
}

// twoReceivers starts two receivers, the second down, with secrets a and b, and
// returns them with a Config of out that delivers to both, each with its own secret.
func twoReceivers(t *testing.T, out webhook.Outbox, a, b string) (up, down *receiver, cfg webhook.Config) {
	t.Helper()
	up, down = &receiver{t: t, secret: a, other: b}, &receiver{t: t, secret: b, other: a}
	down.down.Store(true)
	us, ds := httptest.NewServer(up), httptest.NewServer(down)
	t.Cleanup(us.Close)
	t.Cleanup(ds.Close)
	client, err := web.GuardedClient(web.FetchConfig{AllowHosts: []string{"127.0.0.1"}}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return up, down, webhook.Config{
		Receivers: []webhook.Receiver{{URL: us.URL, Secret: a}, {URL: ds.URL, Secret: b}},
		Outbox:    out, Client: client, Owner: "test"}
}

// deliverUntil runs d.Once until done holds, waiting 1 ms (the backoff) after a
// round with nothing claimed; it fails the test after 2,000 rounds.
func deliverUntil(t *testing.T, d *webhook.Deliverer, done func() bool) {
	t.Helper()
	for range 2000 {
		if done() {
			return
		}
		n, err := d.Once(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			<-time.After(time.Millisecond) // the failed delivery is due again after 1 ms
		}
	}
	t.Fatal("deliveries did not end")
}

// TestDelivererReceiversApart: a failing receiver holds back only itself. The healthy
// receiver gets every event of the thread once, in order, while the other answers
// 503; once that one recovers it gets them all, in order, and the healthy one gets
// no duplicate. Each receiver's requests are signed with its own secret, which does
// not verify the other's; the events end once both have them.
func TestDelivererReceiversApart(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	k := conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1.1"}
	if _, err := st.Save(ctx, conversation.Turn{Key: k, Events: []conversation.Event{
		ev(k, "evt_1", "run.started"), ev(k, "evt_2", "artifact.approved"), ev(k, "evt_3", "run.completed")}}); err != nil {
		t.Fatal(err)
	}
	healthy, flaky, cfg := twoReceivers(t, st, "healthy-secret", "flaky-secret")
	cfg.FirstBackoff, cfg.MaxBackoff = time.Millisecond, time.Millisecond
	d, err := webhook.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"evt_1", "evt_2", "evt_3"}
	deliverUntil(t, d, func() bool { return len(healthy.events()) >= 3 })
	if got := healthy.events(); !slices.Equal(got, want) {
		t.Errorf("healthy receiver got %v while the other failed; want %v", got, want)
	}
	if flaky.failed.Load() == 0 || len(flaky.events()) != 0 {
		t.Fatalf("failing receiver: %d failed requests, accepted %v; want failures, none accepted", flaky.failed.Load(), flaky.events())
	}
	if n, err := st.DeleteEvents(ctx, time.Now().Add(time.Hour)); err != nil || n != 0 {
		t.Fatalf("events ended before the failing receiver had them: %d, %v", n, err)
	}

	flaky.down.Store(false)
	deliverUntil(t, d, func() bool { return len(flaky.events()) >= 3 })
	if got := flaky.events(); !slices.Equal(got, want) {
		t.Errorf("recovered receiver got %v; want %v", got, want)
	}
	if got := healthy.events(); !slices.Equal(got, want) {
		t.Errorf("healthy receiver got %v in all; want each event once: %v", got, want)
	}
	if n, err := st.DeleteEvents(ctx, time.Now().Add(time.Hour)); err != nil || n != 3 {
		t.Errorf("events ended once both receivers had them: %d, %v; want 3", n, err)
	}
}

// TestNewReceivers: a receiver without its own secret is signed with the default;
// without either, or with a URL listed twice, New fails.
func TestNewReceivers(t *testing.T) {
	st := openStore(t)
	base := webhook.Config{Outbox: st, Client: http.DefaultClient}
	cases := []struct {
		name string
		rcvs []webhook.Receiver
		urls []string
		def  string
		ok   bool
	}{
		{"own secrets", []webhook.Receiver{{URL: "https://a.example/h", Secret: "a"}, {URL: "https://b.example/h", Secret: "b"}}, nil, "", true},
		{"default secret", []webhook.Receiver{{URL: "https://a.example/h"}}, []string{"https://b.example/h"}, "d", true},
		{"no secret", []webhook.Receiver{{URL: "https://a.example/h"}, {URL: "https://b.example/h", Secret: "b"}}, nil, "", false},
		{"twice", []webhook.Receiver{{URL: "https://a.example/h", Secret: "a"}}, []string{"https://a.example/h"}, "d", false},
	}
	for _, c := range cases {
		cfg := base
		cfg.Receivers, cfg.URLs, cfg.Secret = c.rcvs, c.urls, c.def
		if _, err := webhook.New(cfg); (err == nil) != c.ok {
			t.Errorf("%s: New error %v; want ok %v", c.name, err, c.ok)
		}
	}
}

// TestDelivererRemovedReceiverHoldsNothing: an event that waited only for a receiver
// since removed from the list ends when a deliverer without it starts.
func TestDelivererRemovedReceiverHoldsNothing(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	k := conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1.1"}
	if _, err := st.Save(ctx, conversation.Turn{Key: k, Events: []conversation.Event{ev(k, "evt_1", "run.started")}}); err != nil {
		t.Fatal(err)
	}
	kept, gone, cfg := twoReceivers(t, st, "kept-secret", "gone-secret")
	cfg.FirstBackoff, cfg.MaxBackoff = time.Hour, time.Hour
	d, err := webhook.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Once(ctx); err != nil {
		t.Fatal(err)
	}
	if len(kept.events()) != 1 || gone.failed.Load() != 1 {
		t.Fatalf("kept got %v, gone failed %d times; want 1 each", kept.events(), gone.failed.Load())
	}
	if n, err := st.DeleteEvents(ctx, time.Now().Add(time.Hour)); err != nil || n != 0 {
		t.Fatalf("the event ended while a receiver still waited for it: %d, %v", n, err)
	}

	cfg.Receivers = cfg.Receivers[:1]
	if d, err = webhook.New(cfg); err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- d.Run(rctx) }()
	defer func() { cancel(); <-done }()
	for deleted, tries := 0, 0; deleted == 0; tries++ {
		if tries == 2000 {
			t.Fatal("the event never ended")
		}
		n, err := st.DeleteEvents(ctx, time.Now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		deleted = n
		select {
		case <-time.After(time.Millisecond): // Run ends the event as it starts
		case err := <-done:
			t.Fatalf("Run returned %v", err)
		}
	}
	if len(kept.events()) != 1 {
		t.Errorf("kept receiver got %v; want evt_1 once", kept.events())
	}
}
