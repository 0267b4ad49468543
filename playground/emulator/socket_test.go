package emulator_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/threadwright/threadwright/playground/emulator"
)

func TestSocketModeEvents(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	bot := StartBot(t, emu)
	ctx := testContext(t)

	hello := bot.Next(t, ctx, socketmode.EventTypeHello)
	if hello.Request.NumConnections != 1 || hello.Request.ConnectionInfo.AppID != "A0APP" {
		t.Errorf("hello = %+v", hello.Request)
	}

	ts, err := emu.PostUserMessage("C0GENERAL", "U0ALICE", "hi <@U0BOT>, help", "")
	if err != nil {
		t.Fatal(err)
	}

	byType := map[string]slackevents.EventsAPIEvent{}
	reqs := map[string]*socketmode.Request{}
	for range 2 {
		req, evt := bot.NextEvent(t, ctx)
		bot.MustAck(t, req)
		byType[evt.InnerEvent.Type] = evt
		reqs[evt.InnerEvent.Type] = req
	}

	msg, ok := byType["message"].InnerEvent.Data.(*slackevents.MessageEvent)
	if !ok {
		t.Fatalf("message event data is %T", byType["message"].InnerEvent.Data)
	}
	if msg.TimeStamp != ts || msg.User != "U0ALICE" || msg.Channel != "C0GENERAL" || msg.ChannelType != "channel" ||
		msg.ClientMsgID == "" || msg.BotID != "" || len(msg.Blocks.BlockSet) != 1 {
		t.Errorf("message event = %+v", msg)
	}
	mention, ok := byType["app_mention"].InnerEvent.Data.(*slackevents.AppMentionEvent)
	if !ok {
		t.Fatalf("app_mention event data is %T", byType["app_mention"].InnerEvent.Data)
	}
	if mention.TimeStamp != ts || mention.Text != "hi <@U0BOT>, help" || mention.User != "U0ALICE" {
		t.Errorf("app_mention event = %+v", mention)
	}

	outer := func(typ string) slackevents.EventsAPICallbackEvent {
		var cb slackevents.EventsAPICallbackEvent
		if err := json.Unmarshal(reqs[typ].Payload, &cb); err != nil {
			t.Fatal(err)
		}
		return cb
	}
	m, a := outer("message"), outer("app_mention")
	if m.EventID == a.EventID || !strings.HasPrefix(m.EventID, "Ev") || m.Type != "event_callback" || m.TeamID != "T0TEAM" || m.APIAppID != "A0APP" {
		t.Errorf("outer events: %+v / %+v", m, a)
	}
	if reqs["message"].EnvelopeID == reqs["app_mention"].EnvelopeID {
		t.Error("both events share an envelope")
	}

	if err := emu.WaitForAcks(ctx); err != nil {
		t.Fatal(err)
	}
	acks := emu.Acks()
	if len(acks) != 2 {
		t.Fatalf("%d acks, want 2", len(acks))
	}
	for _, ack := range acks {
		if ack.Type != emulator.EnvelopeEventsAPI || ack.Latency <= 0 || ack.RetryAttempt != 0 || ack.Duplicate {
			t.Errorf("ack = %+v", ack)
		}
	}
	env, ok := emu.EventEnvelope("app_mention", ts)
	if !ok || env.ID != reqs["app_mention"].EnvelopeID || !env.Acked || env.Deliveries != 1 {
		t.Errorf("EventEnvelope = %+v, %v", env, ok)
	}

	t.Run("OwnMessage", func(t *testing.T) {
		_, botTS, err := bot.API.PostMessage("C0GENERAL", slack.MsgOptionText("answer", false), slack.MsgOptionTS(ts))
		if err != nil {
			t.Fatal(err)
		}
		req, evt := bot.NextEvent(t, ctx)
		bot.MustAck(t, req)
		own := evt.InnerEvent.Data.(*slackevents.MessageEvent)
		if own.TimeStamp != botTS || own.BotID != "B0BOT" || own.User != "U0BOT" || own.ThreadTimeStamp != ts || own.SubType != "" {
			t.Errorf("own message event = %+v", own)
		}
	})
	t.Run("IM", func(t *testing.T) {
		dm, _ := emu.PostUserMessage("D0ALICE", "U0ALICE", "hello <@U0BOT>", "")
		req, evt := bot.NextEvent(t, ctx)
		bot.MustAck(t, req)
		got := evt.InnerEvent.Data.(*slackevents.MessageEvent)
		if evt.InnerEvent.Type != "message" || got.ChannelType != "im" || got.TimeStamp != dm {
			t.Errorf("IM event = %s %+v", evt.InnerEvent.Type, got)
		}
		if env, ok := emu.EventEnvelope("app_mention", dm); ok {
			t.Errorf("an IM produced an app_mention: %+v", env)
		}
	})
	t.Run("OtherBot", func(t *testing.T) {
		other, _ := emu.PostBotMessage("C0GENERAL", "B0OTHER", "beep", ts)
		req, evt := bot.NextEvent(t, ctx)
		bot.MustAck(t, req)
		got := evt.InnerEvent.Data.(*slackevents.MessageEvent)
		if got.SubType != "bot_message" || got.BotID != "B0OTHER" || got.TimeStamp != other || got.ThreadTimeStamp != ts {
			t.Errorf("bot_message event = %+v", got)
		}
	})
}

func TestRedelivery(t *testing.T) {
	emu := MustStart(t, emulator.Config{AckTimeout: 250 * time.Millisecond})
	bot := StartBot(t, emu)
	ctx := testContext(t)
	bot.Next(t, ctx, socketmode.EventTypeHello)

	ts, _ := emu.PostUserMessage("C0GENERAL", "U0ALICE", "no ack for you", "")
	first, _ := bot.NextEvent(t, ctx) // not acked
	if first.RetryAttempt != 0 || first.RetryReason != "" {
		t.Errorf("first delivery: attempt %d reason %q", first.RetryAttempt, first.RetryReason)
	}
	retry, evt := bot.NextEvent(t, ctx)
	if retry.EnvelopeID != first.EnvelopeID || retry.RetryAttempt != 1 || retry.RetryReason != "timeout" {
		t.Errorf("redelivery = id %s attempt %d reason %q", retry.EnvelopeID, retry.RetryAttempt, retry.RetryReason)
	}
	if evt.InnerEvent.Data.(*slackevents.MessageEvent).TimeStamp != ts {
		t.Error("redelivered a different event")
	}
	bot.MustAck(t, retry)
	acks := WaitAcks(t, ctx, emu, 1)
	if acks[0].RetryAttempt != 1 || acks[0].EnvelopeID != first.EnvelopeID {
		t.Errorf("ack = %+v", acks[0])
	}

	t.Run("Redeliver", func(t *testing.T) {
		if err := emu.Redeliver(first.EnvelopeID); err != nil {
			t.Fatal(err)
		}
		again, _ := bot.NextEvent(t, ctx)
		if again.EnvelopeID != first.EnvelopeID || again.RetryAttempt != 2 || again.RetryReason != "timeout" {
			t.Errorf("Redeliver sent attempt %d (%s)", again.RetryAttempt, again.EnvelopeID)
		}
		bot.MustAck(t, again)
		WaitAcks(t, ctx, emu, 2)
	})
	t.Run("GiveUp", func(t *testing.T) {
		ts, _ := emu.PostUserMessage("C0GENERAL", "U0ALICE", "ignored forever", "")
		for attempt := range 4 {
			req, _ := bot.NextEvent(t, ctx)
			if req.RetryAttempt != attempt {
				t.Fatalf("delivery %d has retry_attempt %d", attempt, req.RetryAttempt)
			}
		}
		err := emu.WaitFor(ctx, func() bool {
			env, _ := emu.EventEnvelope("message", ts)
			return env.GaveUp
		})
		if err != nil {
			t.Fatal(err)
		}
		if env, _ := emu.EventEnvelope("message", ts); env.Deliveries != 4 || env.Acked {
			t.Errorf("envelope = %+v", env)
		}
	})
}

func TestSendEnvelope(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	bot := StartBot(t, emu)
	ctx := testContext(t)
	bot.Next(t, ctx, socketmode.EventTypeHello)

	id, err := emu.SendEnvelope(emulator.EnvelopeEventsAPI, json.RawMessage(`{"type":"event_callback","event":{"type":"message","text":"raw"}}`), 2)
	if err != nil {
		t.Fatal(err)
	}
	req, evt := bot.NextEvent(t, ctx)
	if req.EnvelopeID != id || req.RetryAttempt != 2 || req.RetryReason != "timeout" || evt.InnerEvent.Type != "message" {
		t.Errorf("got %+v / %+v", req, evt)
	}
	bot.MustAck(t, req, map[string]string{"note": "seen"})
	acks := WaitAcks(t, ctx, emu, 1)
	if string(acks[0].Payload) != `{"note":"seen"}` || acks[0].RetryAttempt != 2 {
		t.Errorf("ack = %+v", acks[0])
	}

	if err := emu.SendRaw([]byte(`{"type":"no_such_type"}`)); err != nil {
		t.Fatal(err)
	}
	bad := bot.Next(t, ctx, socketmode.EventTypeErrorBadMessage)
	if bad.Data == nil {
		t.Error("no error for an unknown frame type")
	}
}

func TestDisconnectReconnect(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	bot := StartBot(t, emu)
	ctx := testContext(t)
	bot.Next(t, ctx, socketmode.EventTypeHello)

	emu.Disconnect("")
	second := bot.Next(t, ctx, socketmode.EventTypeConnected)
	if second.Data.(*socketmode.ConnectedEvent).ConnectionCount != 1 {
		t.Errorf("connected event = %+v", second.Data)
	}
	bot.Next(t, ctx, socketmode.EventTypeHello)

	ts, _ := emu.PostUserMessage("C0GENERAL", "U0BOB", "still there?", "")
	req, evt := bot.NextEvent(t, ctx)
	bot.MustAck(t, req)
	if evt.InnerEvent.Data.(*slackevents.MessageEvent).TimeStamp != ts {
		t.Error("wrong event after reconnecting")
	}
	WaitAcks(t, ctx, emu, 1)
	if n := len(emu.Calls("apps.connections.open")); n != 2 {
		t.Errorf("apps.connections.open called %d times, want 2", n)
	}

	t.Run("WhileDisconnected", func(t *testing.T) {
		emu.CloseConnections()
		ts, _ := emu.PostUserMessage("C0GENERAL", "U0BOB", "queued", "")
		req, evt := bot.NextEvent(t, ctx)
		bot.MustAck(t, req)
		if evt.InnerEvent.Data.(*slackevents.MessageEvent).TimeStamp != ts || req.RetryAttempt != 0 {
			t.Errorf("after a dropped connection got attempt %d", req.RetryAttempt)
		}
	})
}

func TestConnectionsShareEnvelopes(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	ctx := testContext(t)
	bots := []*Bot{StartBot(t, emu), StartBot(t, emu), StartBot(t, emu)}
	if err := emu.WaitForConnections(ctx, len(bots)); err != nil {
		t.Fatal(err)
	}

	const n = 12
	var mu sync.Mutex
	seen := map[string]int{} // envelope ID -> deliveries
	perBot := make([]int, len(bots))
	var wg sync.WaitGroup
	for i, b := range bots {
		wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case evt := <-b.Events:
					if evt.Type != socketmode.EventTypeEventsAPI {
						continue
					}
					// Counted before the ack: once the emulator has an ack, it is
					// counted here.
					mu.Lock()
					seen[evt.Request.EnvelopeID]++
					perBot[i]++
					mu.Unlock()
					_ = b.Ack(*evt.Request)
				}
			}
		})
	}
	for range n {
		if _, err := emu.PostUserMessage("C0RANDOM", "U0ALICE", "spread", ""); err != nil {
			t.Fatal(err)
		}
	}
	WaitAcks(t, ctx, emu, n)
	if err := emu.WaitForAcks(ctx); err != nil {
		t.Fatal(err)
	}
	// The emulator counts a delivery when it writes the envelope to a connection, so a
	// duplicate shows in Deliveries whether or not it has reached a client yet.
	for _, env := range emu.Envelopes() {
		if env.Type == emulator.EnvelopeEventsAPI && (env.Deliveries != 1 || !env.Acked) {
			t.Errorf("envelope %s: %d deliveries, acked %v; want 1, acked", env.ID, env.Deliveries, env.Acked)
		}
	}
	if acks := emu.Acks(); len(acks) != n {
		t.Errorf("%d acks, want %d", len(acks), n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != n {
		t.Errorf("%d distinct envelopes delivered, want %d", len(seen), n)
	}
	for id, c := range seen {
		if c != 1 {
			t.Errorf("envelope %s delivered %d times", id, c)
		}
	}
	for i, c := range perBot {
		if c == 0 {
			t.Errorf("connection %d received nothing (per connection: %v)", i, perBot)
		}
	}
	for _, ack := range emu.Acks() {
		if ack.Duplicate {
			t.Errorf("duplicate ack %+v", ack)
		}
	}
}

// TestRawSocket checks the wire protocol with a bare WebSocket client: the
// hello message, pings, and the connection limit.
func TestRawSocket(t *testing.T) {
	emu := MustStart(t, emulator.Config{MaxConnections: 2, PingInterval: 20 * time.Millisecond})
	ctx := testContext(t)
	api := NewAPI(emu)

	dial := func() (*websocket.Conn, *http.Response, error) {
		_, wsURL, err := api.StartSocketModeContext(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(wsURL, "ws://") {
			t.Fatalf("apps.connections.open URL %q is not ws://", wsURL)
		}
		return websocket.DefaultDialer.DialContext(ctx, wsURL, nil)
	}

	conn, _, err := dial()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	pings := make(chan struct{}, 10)
	conn.SetPingHandler(func(string) error {
		select {
		case pings <- struct{}{}:
		default:
		}
		return nil
	})
	var hello map[string]any
	if err := conn.ReadJSON(&hello); err != nil {
		t.Fatal(err)
	}
	info, _ := hello["connection_info"].(map[string]any)
	if hello["type"] != "hello" || hello["num_connections"] != 1.0 || info["app_id"] != "A0APP" || hello["debug_info"] == nil {
		t.Errorf("hello = %v", hello)
	}
	go func() { // pings are handled while reading
		for {
			if _, _, err := conn.ReadMessage(); err != nil {
				return
			}
		}
	}()
	for range 2 {
		select {
		case <-pings:
		case <-ctx.Done():
			t.Fatal("no ping")
		}
	}

	second, _, err := dial()
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if err := emu.WaitForConnections(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if _, resp, err := dial(); err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("third connection: %v, %v", resp, err)
	}

	t.Run("TicketIsSingleUse", func(t *testing.T) {
		_, wsURL, err := api.StartSocketModeContext(ctx)
		if err != nil {
			t.Fatal(err)
		}
		u, _ := url.Parse(wsURL)
		if u.Query().Get("ticket") == "" || u.Query().Get("app_id") != "A0APP" {
			t.Errorf("URL %s", wsURL)
		}
		second.Close()
		if err := emu.WaitFor(ctx, func() bool { return emu.NumConnections() == 1 }); err != nil {
			t.Fatal(err)
		}
		c, _, err := websocket.DefaultDialer.DialContext(ctx, wsURL, nil)
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
		if _, resp, err := websocket.DefaultDialer.DialContext(ctx, wsURL, nil); err == nil || resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("reusing a ticket: %v", err)
		}
	})
}

func TestChatUpdateEvents(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	bot := StartBot(t, emu)
	ctx := testContext(t)
	bot.Next(t, ctx, socketmode.EventTypeHello)

	_, ts, err := bot.API.PostMessage("C0GENERAL", slack.MsgOptionText("draft", false))
	if err != nil {
		t.Fatal(err)
	}
	req, _ := bot.NextEvent(t, ctx)
	bot.MustAck(t, req)

	if _, _, _, err := bot.API.UpdateMessage("C0GENERAL", ts, slack.MsgOptionText("final", false)); err != nil {
		t.Fatal(err)
	}
	req, evt := bot.NextEvent(t, ctx)
	bot.MustAck(t, req)
	changed := evt.InnerEvent.Data.(*slackevents.MessageEvent)
	if changed.SubType != "message_changed" || changed.Message == nil || changed.PreviousMessage == nil {
		t.Fatalf("event = %+v", changed)
	}
	if changed.Message.Text != "final" || changed.PreviousMessage.Text != "draft" || changed.Message.Timestamp != ts ||
		changed.Message.BotID != "B0BOT" || changed.Message.Edited == nil {
		t.Errorf("message_changed: message %+v, previous %+v", changed.Message, changed.PreviousMessage)
	}

	t.Run("UserEdit", func(t *testing.T) {
		uts, _ := emu.PostUserMessage("C0GENERAL", "U0ALICE", "typo", "")
		req, _ := bot.NextEvent(t, ctx)
		bot.MustAck(t, req)
		if err := emu.EditUserMessage("C0GENERAL", uts, "fixed"); err != nil {
			t.Fatal(err)
		}
		req, evt := bot.NextEvent(t, ctx)
		bot.MustAck(t, req)
		got := evt.InnerEvent.Data.(*slackevents.MessageEvent)
		if got.SubType != "message_changed" || got.Message.User != "U0ALICE" || got.Message.Text != "fixed" || got.Message.BotID != "" {
			t.Errorf("user edit event = %+v", got.Message)
		}
	})
	t.Run("Delete", func(t *testing.T) {
		if _, _, err := bot.API.DeleteMessage("C0GENERAL", ts); err != nil {
			t.Fatal(err)
		}
		req, evt := bot.NextEvent(t, ctx)
		bot.MustAck(t, req)
		got := evt.InnerEvent.Data.(*slackevents.MessageEvent)
		if got.SubType != "message_deleted" || got.DeletedTimeStamp != ts || got.PreviousMessage == nil || got.PreviousMessage.Text != "final" {
			t.Errorf("message_deleted = %+v", got)
		}
	})
}

func TestWaitForMessages(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	api := NewAPI(emu)
	parent, _ := emu.PostUserMessage("C0GENERAL", "U0ALICE", "q", "")
	go func() {
		for _, text := range []string{"one", "two"} {
			// The scenario's pace, not a synchronisation: the messages come after
			// WaitForMessages has started waiting, so that it is seen to wait.
			time.Sleep(10 * time.Millisecond)
			_, _, _ = api.PostMessage("C0GENERAL", slack.MsgOptionText(text, false), slack.MsgOptionTS(parent))
		}
	}()
	msgs, err := emu.WaitForMessages(testContext(t), "C0GENERAL", parent, 2)
	if err != nil || len(msgs) != 2 || msgs[0].Text != "one" || msgs[1].Text != "two" {
		t.Fatalf("WaitForMessages = %+v, %v", msgs, err)
	}
	short, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := emu.WaitForMessages(short, "C0GENERAL", parent, 3); err == nil {
		t.Error("WaitForMessages returned without a third message")
	}
}
