package bot

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
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
//
// The Bot calls Submit before it acks the envelope that brought the input, so that what
// is acked is stored (docs/architecture.md, "Data flow of one Slack event" and
// "Accepted means stored"). Submit returns a nil error only once in is durably stored,
// or deliberately dropped (accepted false: a duplicate, or not for the bot), and it
// must return within ctx's deadline (the envelope's ack budget, Config.AckBudget).
// After an error the Bot does not ack an Events API envelope, so Slack delivers it
// again (retry_attempt+1); it acks an interaction or slash command, which Slack never
// delivers again, and tells the person ephemerally. conversation.ErrClosed means the
// Submitter is shutting down.
type Submitter interface {
	Submit(ctx context.Context, in conversation.Input) (accepted bool, err error)
}

// DefaultAckBudget is the default Config.AckBudget: Slack's ack deadline is 3 seconds
// (https://docs.slack.dev/apis/events-api/using-socket-mode), and the ack itself
// needs some of it.
const DefaultAckBudget = 2500 * time.Millisecond

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
	// Signer signs the actions of the Messenger's buttons (NewSigningMessenger) and
	// verifies those of clicks and modal submissions; required.
	Signer *Signer
	// Feedback stores the clicks of answers' feedback buttons (nil: they are dropped).
	Feedback FeedbackRecorder
	// AckBudget bounds Submitter.Submit: its context ends AckBudget after the Bot read
	// the envelope from the socket (default DefaultAckBudget). Time an envelope waited
	// in slack-go's buffer before that is not counted.
	AckBudget time.Duration
	// Metrics, when set, is told of envelopes and reconnections.
	Metrics Metrics
	// Connections is how many Socket Mode connections the Bot opens, from 1 to
	// MaxConnections (0: 1). Slack spreads an app's envelopes across its open
	// connections, and each is read and parsed on a goroutine of its own
	// (docs/operations.md, "Deploy").
	Connections int
}

// MaxConnections is the most Socket Mode connections Slack lets an app open at once,
// across all its processes (https://docs.slack.dev/apis/events-api/using-socket-mode).
const MaxConnections = 10

// Bot receives Slack events and interactions in Socket Mode and hands the ones meant
// for it to a Submitter. Create it with New and start it with Run.
type Bot struct {
	cfg Config
	log *slog.Logger
	// conns are the Socket Mode connections, Config.Connections of them (socketConn;
	// Bot.connection in drops.go follows their state).
	conns []*socketConn

	// lanes take the envelopes that wait for a store (an input, feedback), each
	// thread's on a goroutine of its own (lanes.go): envelopes are handled
	// concurrently, and a thread's in the order they came.
	lanes *lanes

	// background tracks the goroutines opening modals (views.open) and telling people
	// what went wrong (chat.postEphemeral), so that the event loop never waits for them.
	background sync.WaitGroup
	// mu guards opened.
	mu sync.Mutex
	// opened holds the trigger_ids a modal was opened for, with when, so that a
	// redelivered click does not try twice.
	opened map[string]time.Time
}

// Connected reports whether at least one Socket Mode connection is up (Slack said
// hello on it).
func (b *Bot) Connected() bool {
	for _, c := range b.conns {
		if c.up.Load() {
			return true
		}
	}
	return false
}

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
	if cfg.API == nil || cfg.Submitter == nil || cfg.Signer == nil {
		return nil, errors.New("bot: Config.API, Config.Submitter and Config.Signer are required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.AckBudget <= 0 {
		cfg.AckBudget = DefaultAckBudget
	}
	cfg.Connections = max(cfg.Connections, 1)
	if cfg.Connections > MaxConnections {
		return nil, fmt.Errorf("bot: Config.Connections is %d; Slack allows at most %d socket mode connections per app", cfg.Connections, MaxConnections)
	}
	b := &Bot{cfg: cfg, log: cfg.Logger, opened: map[string]time.Time{}}
	for i := range cfg.Connections {
		b.conns = append(b.conns, newSocketConn(cfg.API, i+1, cfg.Logger))
	}
	return b, nil
}

// Run opens Config.Connections Socket Mode connections (apps.connections.open, then
// the WebSocket, each; slack-go reconnects one when it drops or Slack asks with
// "disconnect") and handles envelopes until ctx ends: concurrently, those of one
// thread one at a time in the order the process read them, whichever connection
// brought them (lanes.go). Each envelope is acked on the connection it came on, once
// its input is stored (see Submitter). It returns nil when ctx ends, or the first
// error that stopped a connection (an invalid app token, for example), which stops
// the others. Envelopes taken, modals being opened and notices being posted are
// finished before Run returns.
func (b *Bot) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer b.background.Wait()
	b.lanes = startLanes(maxQueued)
	defer b.lanes.stop()
	errs := make(chan error, len(b.conns))
	for _, c := range b.conns {
		go func() { errs <- b.runConn(ctx, c) }()
	}
	var first error
	for range b.conns {
		if err := <-errs; err != nil && first == nil {
			first = err
			cancel()
		}
	}
	return first
}

// runConn runs connection c and handles its events until ctx ends (nil) or the
// connection stops (its error).
func (b *Bot) runConn(ctx context.Context, c *socketConn) error {
	ctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { errc <- c.client.RunContext(ctx) }()
	socketDone, err := b.loop(ctx, c, errc)
	cancel()
	if !socketDone {
		<-errc
	}
	c.up.Store(false)
	return err
}

// loop handles c's socket events until ctx ends, the socket stops (socketDone) or an
// event stops the bot.
func (b *Bot) loop(ctx context.Context, c *socketConn, errc <-chan error) (socketDone bool, err error) {
	for {
		select {
		case <-ctx.Done():
			return false, nil
		case err := <-errc:
			if ctx.Err() != nil {
				return true, nil
			}
			return true, fmt.Errorf("socket mode: %w", err)
		case evt := <-c.client.Events:
			if err := b.handle(ctx, c, evt); err != nil {
				return false, err
			}
		}
	}
}

// handle handles one event of connection c: an envelope (see handleEnvelope), or a
// change of the connection.
func (b *Bot) handle(ctx context.Context, c *socketConn, evt socketmode.Event) error {
	switch evt.Type {
	case socketmode.EventTypeEventsAPI, socketmode.EventTypeInteractive, socketmode.EventTypeSlashCommand:
		if evt.Request != nil {
			b.handleEnvelope(ctx, c, evt)
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
		c.ack(ctx, id, nil)
		b.log.Warn("malformed envelope acked and dropped", "envelope_id", id, "cause", bad.Cause)
	case socketmode.EventTypeInvalidAuth:
		return errors.New("socket mode: invalid_auth: check SLACK_APP_TOKEN (an xapp- token with connections:write)")
	default:
		b.connection(c, evt)
	}
	return nil
}

// handleEnvelope turns an envelope read from connection c into an input, submits it
// and acks the envelope on c once the input is stored (see Submitter). Envelopes that
// are not for the bot, and clicks that open a modal (views.open, started in the
// background right after the ack: the trigger_id expires 3 s after the click), are
// acked at once; a thumbs down's reason modal opens before its feedback is stored.
func (b *Bot) handleEnvelope(ctx context.Context, c *socketConn, evt socketmode.Event) {
	received := time.Now()
	b.metrics().EnvelopeReceived(string(evt.Type))
	req := evt.Request
	if req.RetryAttempt > 0 {
		b.log.Debug("redelivered envelope", "envelope_id", req.EnvelopeID, "retry_attempt", req.RetryAttempt, "retry_reason", req.RetryReason)
	}
	in, modal, fb, viewErrors := b.inputFor(evt)
	if viewErrors != nil {
		// A modal's submission with fields to correct: the ack keeps the modal open
		// with the messages under them (response_action "errors").
		if c.ack(ctx, req.EnvelopeID, map[string]any{"response_action": "errors", "errors": viewErrors}) {
			b.metrics().EnvelopeAcked(string(evt.Type), time.Since(received))
		}
		return
	}
	if in == nil && fb == nil {
		b.ackEnvelope(ctx, c, evt.Type, req.EnvelopeID, received)
		if modal != nil {
			b.openModal(*modal, req.RetryAttempt > 0)
		}
		return
	}
	if modal != nil {
		// A thumbs down's reason modal opens at once: its trigger_id expires 3 s
		// after the click, and the record may wait on its lane and take most of the
		// ack budget.
		b.openModal(*modal, req.RetryAttempt > 0)
	}
	b.lanes.do(laneOf(req.EnvelopeID, in, fb), func() { b.store(ctx, c, evt, received, in, fb) })
}

// laneOf returns the lane of an envelope (envelopeID) that brings in or fb: its
// thread's for an input, so that a thread's inputs are stored in the order they came;
// its answer's for feedback, so that two clicks on one answer are too (the second
// replaces the first), without waiting behind the thread's inputs; else its own.
func laneOf(envelopeID string, in *conversation.Input, fb *conversation.Feedback) string {
	switch {
	case in != nil:
		return in.Key.String()
	case fb != nil:
		return "feedback:" + fb.Key.String() + "/" + fb.MessageTS
	}
	return envelopeID
}

// store stores what an envelope of connection c brings (its feedback, its input), on
// the envelope's lane, and acks the envelope on c once it is stored (see Submitter).
func (b *Bot) store(ctx context.Context, c *socketConn, evt socketmode.Event, received time.Time, in *conversation.Input, fb *conversation.Feedback) {
	req := evt.Request
	thank := false
	if fb != nil {
		// Feedback is stored before the ack, like an input (docs/operations.md, "Feedback").
		fctx, cancel := context.WithDeadline(ctx, received.Add(b.cfg.AckBudget))
		// A thumbs down opens the reason modal, which is its acknowledgement; a
		// thumbs up or a reason is thanked, once acked.
		thank = b.recordFeedback(fctx, *fb) && (fb.Rating == conversation.RatingPositive || fb.Reason != "")
		cancel()
	}
	if in == nil {
		b.ackEnvelope(ctx, c, evt.Type, req.EnvelopeID, received)
		if thank {
			b.tell(fb.Key.ChannelID, fb.Key.ThreadTS, fb.UserID, feedbackThanksText)
		}
		return
	}

	// The envelope's logger, made only for a line that is written: With formats its
	// attributes at once, a cost every envelope would pay on its way to the ack.
	log := func() *slog.Logger {
		return b.log.With("envelope_id", req.EnvelopeID, conversation.LogKeyThread, in.Key.String(), conversation.LogKeyInput, in.ID)
	}
	submitCtx, cancel := context.WithDeadline(ctx, received.Add(b.cfg.AckBudget))
	accepted, err := b.cfg.Submitter.Submit(submitCtx, *in)
	cancel()
	// Run's ctx ends at shutdown, like the Submitter's ErrClosed.
	closing := errors.Is(err, conversation.ErrClosed) || ctx.Err() != nil
	switch {
	case err == nil:
		b.ackEnvelope(ctx, c, evt.Type, req.EnvelopeID, received)
		if !accepted && b.log.Enabled(ctx, slog.LevelDebug) {
			log().Debug("input not for the bot or already seen")
		}
	case evt.Type == socketmode.EventTypeEventsAPI && closing:
		log().Warn("event arrived during shutdown; not acked, so Slack delivers it again", conversation.LogKeyEvent, in.EventID, "retry_attempt", req.RetryAttempt)
	case evt.Type == socketmode.EventTypeEventsAPI:
		log().Warn("event not stored; not acked, so Slack delivers it again", conversation.LogKeyEvent, in.EventID, "retry_attempt", req.RetryAttempt, "error", err)
	default:
		// Slack never delivers an interaction again, and shows the person an error
		// when it is not acked: ack it and say what happened.
		b.ackEnvelope(ctx, c, evt.Type, req.EnvelopeID, received)
		text := submitFailedText
		if closing {
			text = closingText
			log().Warn("interaction arrived during shutdown; the person is told")
		} else {
			log().Error("interaction not stored; the person is told", "error", err)
		}
		b.tell(in.Key.ChannelID, in.Key.ThreadTS, interactionUser(*in), text)
	}
}

// inputFor turns an envelope into the input it carries, or the modal it asks for, or
// the feedback it gives (with a modal for a thumbs down), or the errors to show in a
// modal whose submission is not taken; all are nil when it is dropped (what is
// dropped is logged).
func (b *Bot) inputFor(evt socketmode.Event) (*conversation.Input, *modalRequest, *conversation.Feedback, map[string]string) {
	envID := evt.Request.EnvelopeID
	switch data := evt.Data.(type) {
	case slackevents.EventsAPIEvent:
		in, ok, reason := inputFromEvent(data, b.cfg.Identity)
		if !ok {
			b.log.Debug("event dropped", "envelope_id", envID, "event_type", data.InnerEvent.Type, "reason", reason)
			return nil, nil, nil, nil
		}
		return &in, nil, nil, nil
	case slack.SlashCommand:
		in, ok, reason := inputFromSlashCommand(data, b.cfg.Identity, envID)
		if !ok {
			b.log.Warn("slash command dropped", "envelope_id", envID, "reason", reason)
			return nil, nil, nil, nil
		}
		return &in, nil, nil, nil
	case slack.InteractionCallback:
		it, ok, reason := fromInteraction(data, b.cfg.Identity, envID, b.cfg.Signer)
		switch {
		case !ok && refused(reason):
			channel, thread := refusedPlace(data)
			b.log.Info("click refused", "envelope_id", envID, "type", data.Type, "user", data.User.ID, "channel", channel, "reason", reason)
			b.tell(channel, thread, data.User.ID, refusedClickText)
		case !ok && reason == dropBadValue:
			b.log.Warn("interaction dropped", "envelope_id", envID, "type", data.Type, "reason", reason)
		case !ok:
			b.log.Debug("interaction dropped", "envelope_id", envID, "type", data.Type, "callback_id", data.CallbackID, "reason", reason)
		case it.viewErrors != nil:
			b.log.Debug("modal submission with fields to correct", "envelope_id", envID, "fields", len(it.viewErrors))
			return nil, nil, nil, it.viewErrors
		case it.feedback != nil || it.modal != nil:
			return nil, it.modal, it.feedback, nil
		default:
			return &it.input, nil, nil, nil
		}
	}
	return nil, nil, nil, nil
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

// openModal opens m's modal with views.open in the background, so that the event loop
// does not wait, and tells the user when it fails. A trigger_id this process already
// used is skipped; a redelivered envelope (another replica may have opened its modal)
// fails silently.
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
	b.background.Add(1)
	go func() {
		defer b.background.Done()
		ctx, cancel := context.WithTimeout(context.Background(), modalOpenTimeout)
		defer cancel()
		_, err := b.cfg.API.OpenViewContext(ctx, m.triggerID, m.view)
		switch {
		case err != nil && redelivered:
			b.log.Debug("modal of a redelivered click not opened", "action", m.action.Name, "error", err)
		case err != nil:
			b.log.Warn("modal not opened", "action", m.action.Name, conversation.LogKeyThread, m.action.Channel+"/"+m.action.ThreadTS, "error", err)
			b.notify(m.action.Channel, m.action.ThreadTS, m.userID, modalFailedText)
		}
	}()
}

// tell shows text to userID in channel (and thread) with chat.postEphemeral, in the
// background, for interactions the bot could not handle.
func (b *Bot) tell(channel, threadTS, userID, text string) {
	if channel == "" || userID == "" {
		return
	}
	b.background.Add(1)
	go func() {
		defer b.background.Done()
		b.notify(channel, threadTS, userID, text)
	}()
}

// notify posts tell's notice (chat.postEphemeral); a failure is only logged.
func (b *Bot) notify(channel, threadTS, userID, text string) {
	if channel == "" || userID == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := b.cfg.API.PostEphemeralContext(ctx, channel, userID, slack.MsgOptionText(text, false), threadOption(threadTS)); err != nil {
		b.log.Warn("ephemeral notice not posted", "channel", channel, "error", err)
	}
}

// feedbackFailedText is what a person whose feedback could not be stored is told.
const feedbackFailedText = "Sorry, your feedback could not be saved just now. Please try again."

// feedbackThanksText acknowledges a thumbs up or a reason, shown only to its giver.
const feedbackThanksText = "Thanks for the feedback: it helps make these answers better."

// recordFeedback stores f within ctx (the envelope's ack budget) and reports whether
// it did; a failure is logged and the person told.
func (b *Bot) recordFeedback(ctx context.Context, f conversation.Feedback) bool {
	if b.cfg.Feedback == nil {
		b.log.Debug("feedback dropped: no FeedbackRecorder", "channel", f.Key.ChannelID, "message_ts", f.MessageTS)
		return false
	}
	if err := b.cfg.Feedback.Record(ctx, f); err != nil {
		b.log.Error("feedback not stored; the person is told", "channel", f.Key.ChannelID, "message_ts", f.MessageTS, "error", err)
		b.tell(f.Key.ChannelID, f.Key.ThreadTS, f.UserID, feedbackFailedText)
		return false
	}
	b.log.Info("feedback stored", "channel", f.Key.ChannelID, "message_ts", f.MessageTS, "rating", f.Rating, "with_reason", f.Reason != "")
	return true
}

// socketConn is one of the Bot's Socket Mode connections: its slack-go client, which
// reads and parses the connection's frames on a goroutine of its own and reconnects
// it, and its state, which only the goroutine handling its events (Bot.loop) changes.
type socketConn struct {
	// n numbers the connection from 1: the connection attribute of its log lines.
	n      int
	client *socketmode.Client
	log    *slog.Logger
	// drops learns why this connection dropped, from the connection itself.
	drops *dropReasons
	// up is set while the connection is up (Slack said hello on it).
	up atomic.Bool
	// everConnected is set once the first connection was made.
	everConnected bool
	// downSince is when the connection was found lost (zero while it is up, and before
	// the first connection).
	downSince time.Time
}

// newSocketConn returns the n-th connection (from 1) of a Bot using api.
func newSocketConn(api *slack.Client, n int, logger *slog.Logger) *socketConn {
	// slack-go's debug mode, which logs the causes of a drop, re-encodes every frame:
	// the dialer watches the connections for them instead (docs/operations.md, "Deploy").
	drops := &dropReasons{}
	dialer := &socketDialer{drops: drops, proxy: http.ProxyFromEnvironment}
	client := socketmode.New(api, socketmode.OptionDialer(dialer.websocketDialer()),
		socketmode.OptionLog(log.New(io.Discard, "", 0)))
	return &socketConn{n: n, client: client, log: logger, drops: drops}
}

// ackWait bounds the wait for room in slack-go's queue of acks (it drains while the
// connection is up): an ack that cannot be sent by Slack's deadline is worth nothing.
const ackWait = 3 * time.Second

// ack queues the ack of an envelope read from c for c's writer, with payload (nil for
// none: for a view_submission, what Slack does with the modal, response_action), and
// reports whether it did.
func (c *socketConn) ack(ctx context.Context, envelopeID string, payload any) bool {
	ctx, cancel := context.WithTimeout(ctx, ackWait)
	defer cancel()
	if err := c.client.AckCtx(ctx, envelopeID, payload); err != nil {
		c.log.Warn("ack not sent", "connection", c.n, "envelope_id", envelopeID, "error", err)
		return false
	}
	return true
}

// metrics returns Config.Metrics, or one that does nothing.
func (b *Bot) metrics() Metrics {
	if b.cfg.Metrics == nil {
		return noMetrics{}
	}
	return b.cfg.Metrics
}

// ackEnvelope acks on connection c the envelope of type typ read at received, and
// tells Metrics.
func (b *Bot) ackEnvelope(ctx context.Context, c *socketConn, typ socketmode.EventType, envelopeID string, received time.Time) {
	if c.ack(ctx, envelopeID, nil) {
		b.metrics().EnvelopeAcked(string(typ), time.Since(received))
	}
}

// refusedPlace returns where the person whose interaction was refused is told: the
// channel and thread of the message clicked, or for a modal's submission those its
// action names.
func refusedPlace(cb slack.InteractionCallback) (channel, threadTS string) {
	if cb.Type == slack.InteractionTypeViewSubmission {
		if a, err := conversation.DecodeAction(cb.View.PrivateMetadata); err == nil {
			return a.Channel, a.ThreadTS
		}
		return "", ""
	}
	return cmp.Or(cb.Container.ChannelID, cb.Channel.ID), cmp.Or(cb.Container.ThreadTs, cb.Message.ThreadTimestamp)
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
