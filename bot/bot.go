package bot

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/threadwright/threadwright/conversation"
)

// Submitter accepts conversation inputs (conversation.Service implements it). Inputs
// are of every kind: KindUserMessage from events, KindAction from clicks and modal
// submissions, KindCommand from slash commands and the message shortcut. A slash
// command's Key has no ThreadTS (Slack sends slash commands from channels only): the
// conversation layer resolves the thread it targets.
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

// Bot receives Slack events and interactions in Socket Mode and hands the ones meant
// for it to a Submitter. Create it with New and start it with Run.
type Bot struct {
	cfg       Config
	log       *slog.Logger
	socket    *socketmode.Client
	connected atomic.Bool

	// modals tracks the goroutines opening modals (views.open).
	modals sync.WaitGroup
	// mu guards opened.
	mu sync.Mutex
	// opened holds the trigger_ids a modal was opened for, with when, so that a
	// redelivered click does not try twice.
	opened map[string]time.Time
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
	return &Bot{cfg: cfg, log: cfg.Logger, socket: socketmode.New(cfg.API), opened: map[string]time.Time{}}, nil
}

// Run connects in Socket Mode (apps.connections.open, then the WebSocket; slack-go
// reconnects on Slack's "disconnect" requests) and handles envelopes until ctx ends.
// It returns nil when ctx ends, or the error that stopped the connection (an invalid
// app token, for example). Inputs handed to the dispatcher before ctx ended are
// submitted, and modals being opened are opened, before Run returns.
func (b *Bot) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	work := make(chan job, b.cfg.QueueSize)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		b.dispatch(work)
	}()
	defer wg.Wait()
	defer close(work)
	defer b.modals.Wait()

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

// job is what the dispatcher submits: an Events API event still to be turned into an
// input, or an input made from an interaction.
type job struct {
	event *slackevents.EventsAPIEvent
	input *conversation.Input
}

// handle acks evt first, then opens the modal it asks for (at once: its trigger_id
// expires in 3 s) or queues what it carries for the dispatcher.
func (b *Bot) handle(ctx context.Context, evt socketmode.Event, work chan<- job) error {
	switch evt.Type {
	case socketmode.EventTypeEventsAPI, socketmode.EventTypeInteractive, socketmode.EventTypeSlashCommand:
		if evt.Request == nil {
			return nil
		}
		b.ack(ctx, evt.Request.EnvelopeID)
		if evt.Request.RetryAttempt > 0 {
			b.log.Debug("redelivered envelope", "envelope_id", evt.Request.EnvelopeID, "retry_attempt", evt.Request.RetryAttempt, "retry_reason", evt.Request.RetryReason)
		}
		j, ok := b.jobFor(evt)
		if !ok {
			return nil
		}
		select {
		case work <- j:
		case <-ctx.Done():
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

// jobFor turns an acked envelope into work for the dispatcher. It opens the modal of an
// interaction that asks for one (and returns ok false), and logs what it drops.
func (b *Bot) jobFor(evt socketmode.Event) (job, bool) {
	envID := evt.Request.EnvelopeID
	switch data := evt.Data.(type) {
	case slackevents.EventsAPIEvent:
		return job{event: &data}, true
	case slack.SlashCommand:
		in, ok, reason := inputFromSlashCommand(data, b.cfg.Identity, envID)
		if !ok {
			b.log.Warn("slash command dropped", "envelope_id", envID, "reason", reason)
			return job{}, false
		}
		return job{input: &in}, true
	case slack.InteractionCallback:
		it, ok, reason := fromInteraction(data, b.cfg.Identity, envID)
		switch {
		case !ok && reason == dropBadValue:
			b.log.Warn("interaction dropped", "envelope_id", envID, "type", data.Type, "reason", reason)
		case !ok:
			b.log.Debug("interaction dropped", "envelope_id", envID, "type", data.Type, "callback_id", data.CallbackID, "reason", reason)
		case it.modal != nil:
			b.openModal(*it.modal, evt.Request.RetryAttempt > 0)
		default:
			return job{input: &it.input}, true
		}
	}
	return job{}, false
}

// modalOpenTimeout bounds views.open: a trigger_id is valid for 3 seconds
// (https://docs.slack.dev/interactivity/handling-user-interaction#modal_responses).
const modalOpenTimeout = 3 * time.Second

// triggerMemory is how long a trigger_id is remembered as used.
const triggerMemory = time.Minute

// Messages shown (ephemerally) when an interaction could not be handled.
const (
	modalFailedText  = "Sorry, the form could not be opened. Please try again, or reply in the thread."
	submitFailedText = "Sorry, threadwright could not take that just now. Please try again."
	closingText      = "threadwright is restarting. Please try again in a minute."
)

// openModal opens m's modal with views.open in its own goroutine, so that neither the
// socket reader nor the dispatcher waits, and tells the user when it fails. A
// trigger_id this process already used is skipped; a redelivered envelope (another
// replica may have opened its modal) fails silently.
func (b *Bot) openModal(m modalRequest, redelivered bool) {
	now := time.Now()
	b.mu.Lock()
	_, seen := b.opened[m.triggerID]
	for id, at := range b.opened {
		if now.Sub(at) > triggerMemory {
			delete(b.opened, id)
		}
	}
	b.opened[m.triggerID] = now
	b.mu.Unlock()
	if seen {
		b.log.Debug("modal already opened for this trigger", "action", m.action.Name)
		return
	}
	b.modals.Add(1)
	go func() {
		defer b.modals.Done()
		ctx, cancel := context.WithTimeout(context.Background(), modalOpenTimeout)
		defer cancel()
		_, err := b.cfg.API.OpenViewContext(ctx, m.triggerID, m.view)
		switch {
		case err != nil && redelivered:
			b.log.Debug("modal of a redelivered click not opened", "action", m.action.Name, "error", err)
		case err != nil:
			b.log.Warn("modal not opened", "action", m.action.Name, conversation.LogKeyThread, m.action.Channel+"/"+m.action.ThreadTS, "error", err)
			b.tell(m.action.Channel, m.action.ThreadTS, m.userID, modalFailedText)
		}
	}()
}

// tell shows text to userID in channel (and thread) with chat.postEphemeral, for
// interactions the bot could not handle; a failure is only logged.
func (b *Bot) tell(channel, threadTS, userID, text string) {
	if channel == "" || userID == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := b.cfg.API.PostEphemeralContext(ctx, channel, userID, slack.MsgOptionText(text, false), threadOption(threadTS)); err != nil {
		b.log.Warn("ephemeral notice not posted", "channel", channel, "error", err)
	}
}

// ack queues the envelope's ack for slack-go's writer.
func (b *Bot) ack(ctx context.Context, envelopeID string) {
	if err := b.socket.AckCtx(ctx, envelopeID, nil); err != nil {
		b.log.Warn("ack not sent", "envelope_id", envelopeID, "error", err)
	}
}

// dispatch turns queued events into inputs and submits them, with the inputs of
// interactions, in arrival order, until work is closed. A person whose click or
// command could not be submitted is told so ephemerally.
func (b *Bot) dispatch(work <-chan job) {
	ctx := context.Background() // submitting an input accepted before shutdown must finish
	for j := range work {
		in := j.input
		if j.event != nil {
			ev, ok, reason := inputFromEvent(*j.event, b.cfg.Identity)
			if !ok {
				b.log.Debug("event dropped", "event_type", j.event.InnerEvent.Type, "reason", reason)
				continue
			}
			in = &ev
		}
		log := b.log.With(conversation.LogKeyThread, in.Key.String(), conversation.LogKeyEvent, in.EventID)
		accepted, err := b.cfg.Submitter.Submit(ctx, *in)
		switch {
		case errors.Is(err, conversation.ErrClosed):
			log.Warn("input arrived during shutdown; Slack will not redeliver an acked event", conversation.LogKeyInput, in.ID)
		case err != nil:
			log.Error("input not accepted", conversation.LogKeyInput, in.ID, "error", err)
		case !accepted:
			log.Debug("input not for the bot or already seen", conversation.LogKeyInput, in.ID)
		}
		if err != nil && in.Kind != conversation.KindUserMessage {
			text := submitFailedText
			if errors.Is(err, conversation.ErrClosed) {
				text = closingText
			}
			b.tell(in.Key.ChannelID, in.Key.ThreadTS, interactionUser(*in), text)
		}
	}
}

// interactionUser returns the person who clicked or commanded.
func interactionUser(in conversation.Input) string {
	switch {
	case in.Action != nil:
		return in.Action.UserID
	case in.Command != nil:
		return in.Command.UserID
	}
	return ""
}
