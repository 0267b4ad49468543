package webhook_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/threadwright/threadwright/agents/web"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/webhook"
)

// lateCancelOutbox claims as the store does, then answers ctx's error when ctx ended
// meanwhile: a database driver that gave up on ctx after the claim committed.
type lateCancelOutbox struct {
	webhook.Outbox
}

func (o lateCancelOutbox) ClaimEvents(ctx context.Context, receiver, owner string, ttl time.Duration, limit int) ([]conversation.Event, error) {
	events, err := o.Outbox.ClaimEvents(context.WithoutCancel(ctx), receiver, owner, ttl, limit)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return events, err
}

// TestClaimAsShutdownStartsIsHandedBack: a batch claimed while the deliverer shuts
// down is handed back at once, so the next owner (a replica, or this one restarted)
// sends it without waiting out the lease.
func TestClaimAsShutdownStartsIsHandedBack(t *testing.T) {
	st := openStore(t)
	k := conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1.1"}
	if _, err := st.Save(context.Background(), conversation.Turn{Key: k, Events: []conversation.Event{ev(k, "evt_1", "run.started")}}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	client, err := web.GuardedClient(web.FetchConfig{AllowHosts: []string{"127.0.0.1"}}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	d, err := webhook.New(webhook.Config{URLs: []string{srv.URL}, Secret: "s3cret", Outbox: lateCancelOutbox{st}, Client: client,
		Owner: "old", FirstBackoff: time.Millisecond, MaxBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // shutting down as the claim runs
	_, _ = d.Once(ctx)

	// The event is free again: another owner claims it now, not after the lease.
	got, err := st.ClaimEvents(context.Background(), webhook.ReceiverID(srv.URL), "new", time.Minute, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Data.ID != "evt_1" {
		t.Fatalf("claimable after the shutdown: %+v; want evt_1 handed back", got)
	}
}
