package emulator_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/threadwright/threadwright/playground/emulator"
)

// MustStart starts an emulator for the test and closes it at the end.
func MustStart(tb testing.TB, cfg emulator.Config) *emulator.Server {
	tb.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	emu, err := emulator.NewServer(cfg)
	if err != nil {
		tb.Fatalf("start emulator: %v", err)
	}
	tb.Cleanup(func() {
		if err := emu.Close(); err != nil {
			tb.Errorf("close emulator: %v", err)
		}
	})
	return emu
}

// NewAPI returns a real slack-go client pointed at emu.
func NewAPI(emu *emulator.Server) *slack.Client {
	cfg := emu.Config()
	return slack.New(cfg.BotToken, slack.OptionAPIURL(emu.URL()), slack.OptionAppLevelToken(cfg.AppToken))
}

// testContext returns a context that ends with the test or after 10 s.
func testContext(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	tb.Cleanup(cancel)
	return ctx
}

// Bot is a real slack-go socket-mode client connected to an emulator. Tests
// read its events with Next and ack them themselves.
type Bot struct {
	*socketmode.Client
	API *slack.Client
}

// StartBot runs a socket-mode client until the test ends.
func StartBot(tb testing.TB, emu *emulator.Server, opts ...socketmode.Option) *Bot {
	tb.Helper()
	api := NewAPI(emu)
	client := socketmode.New(api, opts...)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = client.RunContext(ctx)
	}()
	tb.Cleanup(func() {
		cancel()
		<-done
	})
	return &Bot{Client: client, API: api}
}

// Next returns the next event of one of the given types, skipping others.
func (b *Bot) Next(tb testing.TB, ctx context.Context, types ...socketmode.EventType) socketmode.Event {
	tb.Helper()
	for {
		select {
		case <-ctx.Done():
			tb.Fatalf("waiting for %v: %v", types, ctx.Err())
		case evt := <-b.Events:
			for _, t := range types {
				if evt.Type == t {
					return evt
				}
			}
		}
	}
}

// NextEvent returns the next events_api envelope's request and parsed event.
func (b *Bot) NextEvent(tb testing.TB, ctx context.Context) (*socketmode.Request, slackevents.EventsAPIEvent) {
	tb.Helper()
	evt := b.Next(tb, ctx, socketmode.EventTypeEventsAPI)
	data, ok := evt.Data.(slackevents.EventsAPIEvent)
	if !ok {
		tb.Fatalf("events_api event data is %T", evt.Data)
	}
	return evt.Request, data
}

// Ack acknowledges req and fails the test if it cannot be queued.
func (b *Bot) MustAck(tb testing.TB, req *socketmode.Request, payload ...any) {
	tb.Helper()
	if err := b.Ack(*req, payload...); err != nil {
		tb.Fatalf("ack %s: %v", req.EnvelopeID, err)
	}
}

// WaitAcks waits until emu has recorded at least n acks.
func WaitAcks(tb testing.TB, ctx context.Context, emu *emulator.Server, n int) []emulator.Ack {
	tb.Helper()
	var acks []emulator.Ack
	err := emu.WaitFor(ctx, func() bool {
		acks = emu.Acks()
		return len(acks) >= n
	})
	if err != nil {
		tb.Fatalf("waiting for %d acks, have %d: %v", n, len(acks), err)
	}
	return acks
}
