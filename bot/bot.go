package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/threadwright/threadwright/conversation"
)

// Submitter accepts conversation inputs (conversation.Service implements it).
type Submitter interface {
	Submit(ctx context.Context, in conversation.Input) (bool, error)
}

// Config configures a Bot.
type Config struct {
	// API is the Web API client, made with the bot token (xoxb-), the app-level token
	// (slack.OptionAppLevelToken, xapp-) and, outside production, slack.OptionAPIURL.
	API *slack.Client
	// Identity is the bot's own identity (from auth.test; see Authenticate).
	Identity Identity
	// Submitter receives the inputs.
	Submitter Submitter
	Logger    *slog.Logger
	// QueueSize bounds the acked envelopes waiting for the dispatcher (default 1024).
	// When it is full the socket reader waits, and later acks with it.
	QueueSize int
}

// Bot receives Slack events in Socket Mode and hands the ones meant for it to a
// Submitter. Create it with New and start it with Run.
type Bot struct {
	cfg       Config
	log       *slog.Logger
	socket    *socketmode.Client
	connected atomic.Bool
}

// Connected reports whether the Socket Mode connection is up (Slack said hello).
func (b *Bot) Connected() bool { return b.connected.Load() }

// Authenticate calls auth.test with api's bot token and returns the bot's identity.
func Authenticate(ctx context.Context, api *slack.Client) (Identity, error) {
	r, err := api.AuthTestContext(ctx)
	if err != nil {
		return Identity{}, fmt.Errorf("auth.test: %w", err)
	}
	return Identity{TeamID: r.TeamID, UserID: r.UserID, BotID: r.BotID, UserName: r.User, TeamName: r.Team}, nil
}

// New returns a Bot for cfg.
func New(cfg Config) (*Bot, error) {
	if cfg.API == nil || cfg.Submitter == nil {
		return nil, errors.New("bot: Config.API and Config.Submitter are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = 1024
	}
	return &Bot{cfg: cfg, log: cfg.Logger, socket: socketmode.New(cfg.API)}, nil
}

// Run connects in Socket Mode (apps.connections.open, then the WebSocket; slack-go
// reconnects on Slack's "disconnect" requests) and handles envelopes until ctx ends.
// It returns nil when ctx ends, or the error that stopped the connection (an invalid
// app token, for example). Inputs handed to the dispatcher before ctx ended are
// submitted before Run returns.
func (b *Bot) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	work := make(chan slackevents.EventsAPIEvent, b.cfg.QueueSize)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		b.dispatch(work)
	}()
	defer wg.Wait()
	defer close(work)

	errc := make(chan error, 1)
	go func() { errc <- b.socket.RunContext(ctx) }()
	for {
		select {
		case <-ctx.Done():
			b.connected.Store(false)
			return nil
		case err := <-errc:
			b.connected.Store(false)
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("socket mode: %w", err)
		case evt := <-b.socket.Events:
			if err := b.handle(ctx, evt, work); err != nil {
				return err
			}
		}
	}
}

// handle acks evt first, then queues what it carries for the dispatcher.
func (b *Bot) handle(ctx context.Context, evt socketmode.Event, work chan<- slackevents.EventsAPIEvent) error {
	switch evt.Type {
	case socketmode.EventTypeEventsAPI, socketmode.EventTypeInteractive, socketmode.EventTypeSlashCommand:
		if evt.Request == nil {
			return nil
		}
		b.ack(ctx, evt.Request.EnvelopeID)
		if ev, ok := evt.Data.(slackevents.EventsAPIEvent); ok {
			if evt.Request.RetryAttempt > 0 {
				b.log.Debug("redelivered envelope", "retry_attempt", evt.Request.RetryAttempt, "retry_reason", evt.Request.RetryReason)
			}
			select {
			case work <- ev:
			case <-ctx.Done():
			}
		}
	case socketmode.EventTypeErrorBadMessage:
		bad, _ := evt.Data.(*socketmode.ErrorBadMessage)
		if bad == nil {
			return nil
		}
		id, err := envelopeID(bad.Message)
		if err != nil {
			b.log.Warn("undecodable socket mode frame dropped", "cause", bad.Cause, "error", err)
			return nil
		}
		b.ack(ctx, id)
		b.log.Warn("malformed envelope acked and dropped", "envelope_id", id, "cause", bad.Cause)
	case socketmode.EventTypeInvalidAuth:
		return errors.New("socket mode: invalid_auth: check SLACK_APP_TOKEN (an xapp- token with connections:write)")
	case socketmode.EventTypeHello:
		b.connected.Store(true)
	case socketmode.EventTypeConnecting, socketmode.EventTypeDisconnect:
		b.connected.Store(false)
	case socketmode.EventTypeConnectionError:
		b.connected.Store(false)
		b.log.Warn("socket mode connection error; slack-go retries", "error", evt.Data)
	case socketmode.EventTypeConnected:
		b.log.Info("connected to Slack in socket mode")
	}
	return nil
}

// ack queues the envelope's ack for slack-go's writer.
func (b *Bot) ack(ctx context.Context, envelopeID string) {
	if err := b.socket.AckCtx(ctx, envelopeID, nil); err != nil {
		b.log.Warn("ack not sent", "envelope_id", envelopeID, "error", err)
	}
}

// dispatch turns queued events into inputs and submits them, in arrival order, until
// work is closed.
func (b *Bot) dispatch(work <-chan slackevents.EventsAPIEvent) {
	ctx := context.Background() // submitting an input accepted before shutdown must finish
	for ev := range work {
		in, ok, reason := inputFromEvent(ev, b.cfg.Identity)
		if !ok {
			b.log.Debug("event dropped", "event_type", ev.InnerEvent.Type, "reason", reason)
			continue
		}
		log := b.log.With(conversation.LogKeyThread, in.Key.String(), conversation.LogKeyEvent, in.EventID)
		accepted, err := b.cfg.Submitter.Submit(ctx, in)
		switch {
		case errors.Is(err, conversation.ErrClosed):
			log.Warn("input arrived during shutdown; Slack will not redeliver an acked event", conversation.LogKeyInput, in.ID)
		case err != nil:
			log.Error("input not accepted", conversation.LogKeyInput, in.ID, "error", err)
		case !accepted:
			log.Debug("input not for the bot or already seen", conversation.LogKeyInput, in.ID)
		}
	}
}
