package emulator

import (
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
	Payload      json.RawMessage // the ack's optional payload
	Duplicate    bool            // the envelope had been acknowledged already
	Time         time.Time
}

type envelope struct {
	id              string
	typ             string
	payload         json.RawMessage
	acceptsResponse bool
	attempt         int // retry_attempt of the next or latest delivery
	reason          string
	about           payloadSummary

	sentAt      time.Time // when the latest delivery was written
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

func (e *envelope) stopTimer() {
	if e.timer != nil {
		e.timer.Stop()
		e.timer = nil
	}
}

func (e *envelope) snapshot() Envelope {
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

func newEnvelope(typ string, payload json.RawMessage, retryAttempt int) *envelope {
	env := &envelope{id: newUUID(), typ: typ, payload: payload, attempt: retryAttempt}
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
func newPayloadEnvelope(typ string, payload any) (*envelope, error) {
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
