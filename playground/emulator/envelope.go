package emulator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Socket Mode envelope types (https://docs.slack.dev/apis/events-api/using-socket-mode).
const (
	EnvelopeEventsAPI     = "events_api"
	EnvelopeInteractive   = "interactive"
	EnvelopeSlashCommands = "slash_commands"
)

// ErrEnvelopeNotFound is returned by Redeliver for an unknown envelope ID.
var ErrEnvelopeNotFound = errors.New("emulator: envelope not found")

// Envelope is a snapshot of an envelope the emulator sent (or is about to
// send) to the bot.
type Envelope struct {
	ID      string
	Type    string // EnvelopeEventsAPI, EnvelopeInteractive or EnvelopeSlashCommands
	Payload json.RawMessage

	// What the payload is about, read from it: for events_api the event_id
	// and the inner event's type, subtype, channel and ts; for interactive
	// the payload's type; for slash_commands the command.
	EventID      string
	EventType    string
	EventSubtype string
	Channel      string
	TS           string

	RetryAttempt int    // retry_attempt of the latest delivery
	RetryReason  string // retry_reason of the latest delivery
	Deliveries   int    // how many times it was written to a connection
	Acked        bool
	GaveUp       bool            // not acknowledged after MaxRetries redeliveries
	AckPayload   json.RawMessage // the payload of the first ack, if any
}

// Ack is an acknowledgement read from a socket-mode connection.
type Ack struct {
	EnvelopeID string
	Type       string // the envelope's type
	EventID    string // the envelope's event_id, for events_api
	EventType  string // as in Envelope
	// RetryAttempt is the retry_attempt of the latest delivery written
	// before the ack was read, and Latency the time from that write to the read.
	RetryAttempt int
	Latency      time.Duration
	// Waited is how long that delivery waited between its dispatch (when its ack
	// timer started) and its write: in the connection's queue, behind earlier frames
	// whose writes block while the bot does not read its socket. Waited+Latency is
	// the ack's latency as Slack counts it against its ack deadline (AckTimeout).
	Waited    time.Duration
	Payload   json.RawMessage // the ack's optional payload
	Duplicate bool            // the envelope had been acknowledged already
	Time      time.Time
}

// sentEnvelope is an envelope the emulator sends (or is about to send) to
// the bot, with its delivery state.
type sentEnvelope struct {
	id              string
	typ             string
	payload         json.RawMessage
	acceptsResponse bool
	attempt         int // retry_attempt of the next or latest delivery
	reason          string
	about           payloadSummary

	queuedAt    time.Time // when the latest delivery was dispatched (its ack timer started)
	sentAt      time.Time // when the latest delivery was written
	waited      time.Duration
	sentAttempt int
	deliveries  int
	timer       *time.Timer
	acked       bool
	gaveUp      bool
	ackPayload  json.RawMessage
	// onAck, when set, takes the payload of the first ack (nil for none): a
	// slash command's answer, a view_submission's response_action.
	onAck  func(envelopeID string, payload json.RawMessage)
	viewID string // the view a view_submission submits
}

func (e *sentEnvelope) stopTimer() {
	if e.timer != nil {
		e.timer.Stop()
		e.timer = nil
	}
}

func (e *sentEnvelope) snapshot() Envelope {
	return Envelope{
		ID:           e.id,
		Type:         e.typ,
		Payload:      slices.Clone(e.payload),
		EventID:      e.about.EventID,
		EventType:    e.about.eventType(e.typ),
		EventSubtype: e.about.Event.Subtype,
		Channel:      e.about.channel(),
		TS:           e.about.Event.TS,
		RetryAttempt: e.attempt,
		RetryReason:  e.reason,
		Deliveries:   e.deliveries,
		Acked:        e.acked,
		GaveUp:       e.gaveUp,
		AckPayload:   slices.Clone(e.ackPayload),
	}
}

// payloadSummary is what Envelope reports about a payload.
type payloadSummary struct {
	EventID   string `json:"event_id"`
	Type      string `json:"type"`
	Command   string `json:"command"`
	ChannelID string `json:"channel_id"`
	Event     struct {
		Type    string `json:"type"`
		Subtype string `json:"subtype"`
		Channel string `json:"channel"`
		TS      string `json:"ts"`
	} `json:"event"`
	Channel struct {
		ID string `json:"id"`
	} `json:"channel"`
}

func (p payloadSummary) eventType(envelopeType string) string {
	switch envelopeType {
	case EnvelopeEventsAPI:
		return p.Event.Type
	case EnvelopeSlashCommands:
		return p.Command
	default:
		return p.Type
	}
}

func (p payloadSummary) channel() string {
	switch {
	case p.Event.Channel != "":
		return p.Event.Channel
	case p.ChannelID != "":
		return p.ChannelID
	default:
		return p.Channel.ID
	}
}

func newEnvelope(typ string, payload json.RawMessage, retryAttempt int) *sentEnvelope {
	env := &sentEnvelope{id: newUUID(), typ: typ, payload: payload, attempt: retryAttempt}
	_ = json.Unmarshal(payload, &env.about) // best effort: raw payloads may be anything
	switch {
	case typ == EnvelopeSlashCommands:
		env.acceptsResponse = true
	case typ == EnvelopeInteractive && (env.about.Type == "view_submission" || env.about.Type == "block_suggestion"):
		env.acceptsResponse = true
	}
	if retryAttempt > 0 {
		env.reason = "timeout"
	}
	return env
}

// newPayloadEnvelope encodes payload (with encoding/json) in a new envelope
// of type typ.
func newPayloadEnvelope(typ string, payload any) (*sentEnvelope, error) {
	data, err := json.Marshal(payload)
	if err != nil {
		return nil, fmt.Errorf("emulator: encode payload: %w", err)
	}
	return newEnvelope(typ, data, 0), nil
}

// wireEnvelope is an envelope as written to the socket
// (https://docs.slack.dev/apis/events-api/using-socket-mode#events).
type wireEnvelope struct {
	EnvelopeID             string          `json:"envelope_id"`
	Type                   string          `json:"type"`
	Payload                json.RawMessage `json:"payload"`
	AcceptsResponsePayload bool            `json:"accepts_response_payload"`
	RetryAttempt           int             `json:"retry_attempt"`
	RetryReason            string          `json:"retry_reason"`
}

// socketHub is the Socket Mode side of the emulator: the envelopes sent on
// its connections, their redelivery and the acks read back.
type socketHub struct {
	*connections
	ws *workspace

	// Guarded by ws.mu.
	envelopes map[string]*sentEnvelope
	envOrder  []*sentEnvelope
	pending   []*sentEnvelope // waiting for a connection
	acks      []Ack
}

func newSocketHub(ws *workspace) *socketHub {
	h := &socketHub{ws: ws, envelopes: make(map[string]*sentEnvelope)}
	h.connections = &connections{ws: ws, queue: h, tickets: make(map[string]bool)}
	return h
}

func (h *socketHub) markSent(id string, attempt int) {
	h.ws.mu.Lock()
	defer h.ws.mu.Unlock()
	env := h.envelopes[id]
	if env == nil {
		return
	}
	env.sentAt = time.Now()
	env.waited = env.sentAt.Sub(env.queuedAt)
	env.sentAttempt = attempt
	env.deliveries++
	h.ws.notifyLocked(Update{Kind: UpdateEnvelope, EnvelopeID: id})
}

func (h *socketHub) handleAck(id string, payload json.RawMessage, readAt time.Time) {
	h.ws.mu.Lock()
	defer h.ws.mu.Unlock()
	env := h.envelopes[id]
	if env == nil {
		h.ws.cfg.Logger.Warn("emulator: ack for an unknown envelope", "envelope_id", id)
		return
	}
	if len(payload) == 0 || string(payload) == "null" {
		payload = nil
	}
	h.acks = append(h.acks, Ack{
		EnvelopeID:   id,
		Type:         env.typ,
		EventID:      env.about.EventID,
		EventType:    env.about.eventType(env.typ),
		RetryAttempt: env.sentAttempt,
		Latency:      readAt.Sub(env.sentAt),
		Waited:       env.waited,
		Payload:      payload,
		Duplicate:    env.acked,
		Time:         h.ws.cfg.Now(),
	})
	if !env.acked {
		env.acked = true
		env.gaveUp = false
		env.ackPayload = payload
		env.stopTimer()
		if env.onAck != nil {
			env.onAck(id, payload)
		}
	}
	h.ws.notifyLocked(Update{Kind: UpdateAck, EnvelopeID: id})
}

// enqueueLocked hands env to one connection, round-robin, and starts its ack
// timer; with no connection it waits for the next one.
func (h *socketHub) enqueueLocked(env *sentEnvelope) {
	if h.ws.closed {
		return
	}
	if _, ok := h.envelopes[env.id]; !ok {
		h.envelopes[env.id] = env
		h.envOrder = append(h.envOrder, env)
	}
	c := h.nextConnLocked()
	if c == nil {
		h.pending = append(h.pending, env)
		return
	}
	data, err := json.Marshal(wireEnvelope{
		EnvelopeID:             env.id,
		Type:                   env.typ,
		Payload:                env.payload,
		AcceptsResponsePayload: env.acceptsResponse,
		RetryAttempt:           env.attempt,
		RetryReason:            env.reason,
	})
	if err != nil {
		h.ws.cfg.Logger.Error("emulator: encode envelope", "err", err)
		return
	}
	env.queuedAt = time.Now()
	c.send(frame{data: data, envelopeID: env.id, attempt: env.attempt})
	env.stopTimer()
	attempt := env.attempt
	env.timer = time.AfterFunc(h.ws.cfg.AckTimeout, func() { h.ackTimedOut(env, attempt) })
}

// sendLocked delivers env, or answers ErrClosed once the server is closed.
func (h *socketHub) sendLocked(env *sentEnvelope) (envelopeID string, err error) {
	if h.ws.closed {
		return "", ErrClosed
	}
	h.enqueueLocked(env)
	return env.id, nil
}

// ackTimedOut redelivers an envelope still unacknowledged after AckTimeout,
// with retry_attempt+1 and retry_reason "timeout", up to MaxRetries times.
func (h *socketHub) ackTimedOut(env *sentEnvelope, attempt int) {
	h.ws.mu.Lock()
	defer h.ws.mu.Unlock()
	if h.ws.closed || env.acked || env.attempt != attempt {
		return
	}
	if env.attempt >= h.ws.cfg.MaxRetries {
		env.gaveUp = true
		env.timer = nil
		h.ws.notifyLocked(Update{Kind: UpdateEnvelope, EnvelopeID: env.id})
		return
	}
	env.attempt++
	env.reason = "timeout"
	h.enqueueLocked(env)
}

// submittingLocked reports whether a submission of the view waits for the
// bot's ack.
func (h *socketHub) submittingLocked(viewID string) bool {
	for _, env := range h.envOrder {
		if env.viewID == viewID && !env.acked && !env.gaveUp {
			return true
		}
	}
	return false
}

// stopLocked stops every redelivery and takes the open connections, for
// Close to close.
func (h *socketHub) stopLocked() []*conn {
	conns := h.conns
	h.conns = nil
	for _, env := range h.envelopes {
		env.stopTimer()
	}
	return conns
}

// flushLocked hands the envelopes waiting for a connection to the
// connections, when one has opened.
func (h *socketHub) flushLocked() {
	pending := h.pending
	h.pending = nil
	for _, env := range pending {
		h.enqueueLocked(env)
	}
}

// SendEnvelope sends payload (marshalled with encoding/json; a
// json.RawMessage is sent as is) in an envelope of type typ with the given
// retry_attempt, for tests of raw or malformed payloads. The envelope is
// tracked like the emulator's own: acks are recorded and it is redelivered
// when not acknowledged. With no connection open it waits for one.
func (h *socketHub) SendEnvelope(typ string, payload any, retryAttempt int) (envelopeID string, err error) {
	data, err := json.Marshal(payload)
	if err != nil {
		return "", fmt.Errorf("emulator: encode payload: %w", err)
	}
	h.ws.mu.Lock()
	defer h.ws.mu.Unlock()
	return h.sendLocked(newEnvelope(typ, data, retryAttempt))
}

// Redeliver sends an envelope again now, with retry_attempt+1 and
// retry_reason "timeout", as Slack does when an ack is late; the envelope
// counts as unacknowledged until acked again.
func (h *socketHub) Redeliver(envelopeID string) error {
	h.ws.mu.Lock()
	defer h.ws.mu.Unlock()
	env := h.envelopes[envelopeID]
	if env == nil {
		return fmt.Errorf("%s: %w", envelopeID, ErrEnvelopeNotFound)
	}
	if slices.Contains(h.pending, env) {
		return nil // not delivered yet; it will be
	}
	env.attempt++
	env.reason = "timeout"
	env.acked = false
	env.gaveUp = false
	h.enqueueLocked(env)
	return nil
}

// Envelopes returns every envelope sent so far, oldest first.
func (h *socketHub) Envelopes() []Envelope {
	h.ws.mu.Lock()
	defer h.ws.mu.Unlock()
	out := make([]Envelope, len(h.envOrder))
	for i, env := range h.envOrder {
		out[i] = env.snapshot()
	}
	return out
}

// Envelope returns the envelope with the given ID.
func (h *socketHub) Envelope(envelopeID string) (Envelope, bool) {
	h.ws.mu.Lock()
	defer h.ws.mu.Unlock()
	env := h.envelopes[envelopeID]
	if env == nil {
		return Envelope{}, false
	}
	return env.snapshot(), true
}

// EventEnvelope returns the events_api envelope of the event of eventType
// (for example "message" or "app_mention") about the message ts.
func (h *socketHub) EventEnvelope(eventType, ts string) (Envelope, bool) {
	h.ws.mu.Lock()
	defer h.ws.mu.Unlock()
	for _, env := range h.envOrder {
		if env.typ == EnvelopeEventsAPI && env.about.Event.Type == eventType && env.about.Event.TS == ts {
			return env.snapshot(), true
		}
	}
	return Envelope{}, false
}

// Acks returns every ack read so far, oldest first.
func (h *socketHub) Acks() []Ack {
	h.ws.mu.Lock()
	defer h.ws.mu.Unlock()
	out := make([]Ack, len(h.acks))
	for i, a := range h.acks {
		a.Payload = slices.Clone(a.Payload)
		out[i] = a
	}
	return out
}

// WaitForAcks waits until every envelope sent so far is acknowledged or
// given up on (after MaxRetries redeliveries). Call it before checking Acks
// or Envelopes: the events of the bot's own last messages are usually still
// in flight when WaitForMessages returns.
func (h *socketHub) WaitForAcks(ctx context.Context) error {
	return h.ws.WaitFor(ctx, func() bool {
		h.ws.mu.Lock()
		defer h.ws.mu.Unlock()
		for _, env := range h.envOrder {
			if !env.acked && !env.gaveUp {
				return false
			}
		}
		return true
	})
}
