package bot

import (
	"time"
)

// Metrics observes the Bot's envelopes and its Socket Mode connection
// (package metrics implements it). Envelope types are Socket Mode's:
// "events_api", "interactive", "slash_commands".
type Metrics interface {
	// EnvelopeReceived is told of an envelope read from the connection.
	EnvelopeReceived(envelopeType string)
	// EnvelopeAcked is told of an envelope's ack, queued latency after the envelope
	// was read.
	EnvelopeAcked(envelopeType string, latency time.Duration)
	// SocketReconnected is told when the connection is up again after it was lost
	// (Slack said hello on the new one).
	SocketReconnected()
}

// noMetrics is the Metrics of a Config without one.
type noMetrics struct{}

func (noMetrics) EnvelopeReceived(string)             {}
func (noMetrics) EnvelopeAcked(string, time.Duration) {}
func (noMetrics) SocketReconnected()                  {}
