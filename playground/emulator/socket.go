package emulator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Socket Mode envelope types (https://docs.slack.dev/apis/events-api/using-socket-mode).
const (
	EnvelopeEventsAPI     = "events_api"
	EnvelopeInteractive   = "interactive"
	EnvelopeSlashCommands = "slash_commands"
)

// ErrEnvelopeNotFound is returned by Redeliver for an unknown envelope ID.
var ErrEnvelopeNotFound = errors.New("emulator: envelope not found")

const (
	writeWait    = 10 * time.Second
	connQueue    = 1024    // frames waiting to be written on one connection
	maxAckLength = 1 << 20 // bytes of one frame read from the bot
)

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
	response    *responseTarget // where a slash command's ack payload goes
	viewID      string          // the view a view_submission submits
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

type helloMessage struct {
	Type           string         `json:"type"`
	NumConnections int            `json:"num_connections"`
	DebugInfo      debugInfo      `json:"debug_info"`
	ConnectionInfo connectionInfo `json:"connection_info"`
}

type disconnectMessage struct {
	Type      string    `json:"type"`
	Reason    string    `json:"reason"`
	DebugInfo debugInfo `json:"debug_info"`
}

type debugInfo struct {
	Host                      string `json:"host"`
	BuildNumber               int    `json:"build_number,omitempty"`
	ApproximateConnectionTime int    `json:"approximate_connection_time,omitempty"`
}

type connectionInfo struct {
	AppID string `json:"app_id"`
}

// conn is one socket-mode connection. Frames are written by its writer
// goroutine only, in queue order; pings are written there too.
type conn struct {
	id   int
	ws   *websocket.Conn
	out  chan frame
	done chan struct{}
	once sync.Once
}

type frame struct {
	data       []byte
	envelopeID string // set for envelopes: the write time is recorded
	attempt    int
	closeAfter bool // close the connection after writing (disconnect)
}

func (c *conn) close() {
	c.once.Do(func() {
		close(c.done)
		_ = c.ws.Close()
	})
}

// send queues f without blocking; a full queue closes the connection, as a
// bot that does not read its socket would be dropped by Slack.
func (c *conn) send(f frame) {
	select {
	case c.out <- f:
	default:
		c.close()
	}
}

// appsConnectionsOpen implements apps.connections.open: a one-use WebSocket
// URL for Socket Mode (https://docs.slack.dev/reference/methods/apps.connections.open).
func (s *Server) appsConnectionsOpen(*request) (object, error) {
	ticket := newUUID()
	s.tickets[ticket] = true
	u := "ws" + s.base[len("http"):] + "/link/?" + url.Values{"ticket": {ticket}, "app_id": {s.cfg.AppID}}.Encode()
	return object{"url": u}, nil
}

// serveSocket accepts a socket-mode WebSocket, says hello and starts the
// connection's reader and writer. An upgrade from another web page's origin
// is refused before its ticket is used (checkSocketOrigin).
func (s *Server) serveSocket(w http.ResponseWriter, r *http.Request) {
	if !checkSocketOrigin(r) {
		http.Error(w, "cross-origin WebSocket refused", http.StatusForbidden)
		return
	}
	ticket := r.URL.Query().Get("ticket")
	s.mu.Lock()
	valid := s.tickets[ticket]
	delete(s.tickets, ticket)
	full := len(s.conns) >= s.cfg.MaxConnections
	s.mu.Unlock()
	switch {
	case !valid:
		http.Error(w, "invalid or used ticket; call apps.connections.open", http.StatusUnauthorized)
		return
	case full:
		http.Error(w, "too many socket-mode connections", http.StatusTooManyRequests)
		return
	}

	// Checked above: slack-go sends "Origin: https://api.slack.com", which
	// gorilla's default check would refuse.
	upgrader := websocket.Upgrader{CheckOrigin: checkSocketOrigin}
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // Upgrade has answered the client
	}
	ws.SetReadLimit(maxAckLength)
	c := &conn{ws: ws, out: make(chan frame, connQueue), done: make(chan struct{})}

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || len(s.conns) >= s.cfg.MaxConnections {
		_ = ws.Close()
		return
	}
	s.seq++
	c.id = int(s.seq)
	s.conns = append(s.conns, c)
	hello, _ := json.Marshal(helloMessage{
		Type:           "hello",
		NumConnections: len(s.conns),
		DebugInfo:      debugInfo{Host: "emulator", BuildNumber: 1, ApproximateConnectionTime: 18060},
		ConnectionInfo: connectionInfo{AppID: s.cfg.AppID},
	})
	c.send(frame{data: hello})
	s.wg.Add(2)
	go s.writeLoop(c)
	go s.readLoop(c)

	pending := s.pending
	s.pending = nil
	for _, env := range pending {
		s.enqueueLocked(env)
	}
	s.notifyLocked(Update{Kind: UpdateConnection})
}

func (s *Server) writeLoop(c *conn) {
	defer s.wg.Done()
	defer c.close()
	ping := time.NewTicker(s.cfg.PingInterval)
	defer ping.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-ping.C:
			if err := c.ws.WriteControl(websocket.PingMessage, []byte("ping"), time.Now().Add(writeWait)); err != nil {
				return
			}
		case f := <-c.out:
			if f.envelopeID != "" {
				s.markSent(f.envelopeID, f.attempt)
			}
			_ = c.ws.SetWriteDeadline(time.Now().Add(writeWait))
			if err := c.ws.WriteMessage(websocket.TextMessage, f.data); err != nil {
				return
			}
			if f.closeAfter {
				_ = c.ws.WriteControl(websocket.CloseMessage,
					websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(writeWait))
				return
			}
		}
	}
}

func (s *Server) readLoop(c *conn) {
	defer s.wg.Done()
	defer s.dropConn(c)
	for {
		_, data, err := c.ws.ReadMessage()
		if err != nil {
			return
		}
		readAt := time.Now()
		var ack struct {
			EnvelopeID string          `json:"envelope_id"`
			Payload    json.RawMessage `json:"payload"`
		}
		if err := json.Unmarshal(data, &ack); err != nil || ack.EnvelopeID == "" {
			s.cfg.Logger.Warn("emulator: unreadable frame from the bot", "conn", c.id, "frame", string(data))
			continue
		}
		s.handleAck(ack.EnvelopeID, ack.Payload, readAt)
	}
}

// dropConn forgets a closed connection; its unacknowledged envelopes are
// redelivered elsewhere when their ack timeout fires.
func (s *Server) dropConn(c *conn) {
	c.close()
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := slices.Index(s.conns, c); i >= 0 {
		s.conns = slices.Delete(s.conns, i, i+1)
		s.notifyLocked(Update{Kind: UpdateConnection})
	}
}

func (s *Server) markSent(id string, attempt int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	env := s.envelopes[id]
	if env == nil {
		return
	}
	env.sentAt = time.Now()
	env.sentAttempt = attempt
	env.deliveries++
	s.notifyLocked(Update{Kind: UpdateEnvelope, EnvelopeID: id})
}

func (s *Server) handleAck(id string, payload json.RawMessage, readAt time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	env := s.envelopes[id]
	if env == nil {
		s.cfg.Logger.Warn("emulator: ack for an unknown envelope", "envelope_id", id)
		return
	}
	if len(payload) == 0 || string(payload) == "null" {
		payload = nil
	}
	ack := Ack{
		EnvelopeID:   id,
		Type:         env.typ,
		EventID:      env.about.EventID,
		EventType:    env.about.eventType(env.typ),
		RetryAttempt: env.sentAttempt,
		Latency:      readAt.Sub(env.sentAt),
		Payload:      payload,
		Duplicate:    env.acked,
		Time:         s.cfg.Now(),
	}
	s.acks = append(s.acks, ack)
	if !env.acked {
		env.acked = true
		env.gaveUp = false
		env.ackPayload = payload
		env.stopTimer()
		switch {
		case env.response != nil && payload != nil:
			// A slash command answered in its ack: Slack shows the payload
			// as it shows a response_url answer.
			if err := s.respondLocked(*env.response, payload); err != nil {
				s.cfg.Logger.Warn("emulator: slash command ack payload refused", "envelope_id", id, "err", err)
			}
		case env.viewID != "":
			s.viewSubmittedLocked(env.viewID, payload)
		}
	}
	s.notifyLocked(Update{Kind: UpdateAck, EnvelopeID: id})
}

// enqueueLocked hands env to one connection, round-robin, and starts its ack
// timer; with no connection it waits for the next one.
func (s *Server) enqueueLocked(env *envelope) {
	if s.closed {
		return
	}
	if _, ok := s.envelopes[env.id]; !ok {
		s.envelopes[env.id] = env
		s.envOrder = append(s.envOrder, env)
	}
	if len(s.conns) == 0 {
		s.pending = append(s.pending, env)
		return
	}
	c := s.conns[s.nextConn%len(s.conns)]
	s.nextConn++
	data, err := json.Marshal(wireEnvelope{
		EnvelopeID:             env.id,
		Type:                   env.typ,
		Payload:                env.payload,
		AcceptsResponsePayload: env.acceptsResponse,
		RetryAttempt:           env.attempt,
		RetryReason:            env.reason,
	})
	if err != nil {
		s.cfg.Logger.Error("emulator: encode envelope", "err", err)
		return
	}
	c.send(frame{data: data, envelopeID: env.id, attempt: env.attempt})
	env.stopTimer()
	attempt := env.attempt
	env.timer = time.AfterFunc(s.cfg.AckTimeout, func() { s.ackTimedOut(env, attempt) })
}

// ackTimedOut redelivers an envelope still unacknowledged after AckTimeout,
// with retry_attempt+1 and retry_reason "timeout", up to MaxRetries times.
func (s *Server) ackTimedOut(env *envelope, attempt int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || env.acked || env.attempt != attempt {
		return
	}
	if env.attempt >= s.cfg.MaxRetries {
		env.gaveUp = true
		env.timer = nil
		s.notifyLocked(Update{Kind: UpdateEnvelope, EnvelopeID: env.id})
		return
	}
	env.attempt++
	env.reason = "timeout"
	s.enqueueLocked(env)
}

// SendEnvelope sends payload (marshalled with encoding/json; a
// json.RawMessage is sent as is) in an envelope of type typ with the given
// retry_attempt, for tests of raw or malformed payloads. The envelope is
// tracked like the emulator's own: acks are recorded and it is redelivered
// when not acknowledged. With no connection open it waits for one.
func (s *Server) SendEnvelope(typ string, payload any, retryAttempt int) (envelopeID string, err error) {
	data, err := json.Marshal(payload)
	if err != nil {
		return "", fmt.Errorf("emulator: encode payload: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", ErrClosed
	}
	env := newEnvelope(typ, data, retryAttempt)
	s.enqueueLocked(env)
	return env.id, nil
}

// SendRaw writes data as one text frame to one connection, unchecked, for
// tests of frames that are not envelopes at all.
func (s *Server) SendRaw(data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.conns) == 0 {
		return ErrNoConnection
	}
	c := s.conns[s.nextConn%len(s.conns)]
	s.nextConn++
	c.send(frame{data: slices.Clone(data)})
	return nil
}

// Redeliver sends an envelope again now, with retry_attempt+1 and
// retry_reason "timeout", as Slack does when an ack is late; the envelope
// counts as unacknowledged until acked again.
func (s *Server) Redeliver(envelopeID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	env := s.envelopes[envelopeID]
	if env == nil {
		return fmt.Errorf("%s: %w", envelopeID, ErrEnvelopeNotFound)
	}
	if slices.Contains(s.pending, env) {
		return nil // not delivered yet; it will be
	}
	env.attempt++
	env.reason = "timeout"
	env.acked = false
	env.gaveUp = false
	s.enqueueLocked(env)
	return nil
}

// Envelopes returns every envelope sent so far, oldest first.
func (s *Server) Envelopes() []Envelope {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Envelope, len(s.envOrder))
	for i, env := range s.envOrder {
		out[i] = env.snapshot()
	}
	return out
}

// Envelope returns the envelope with the given ID.
func (s *Server) Envelope(envelopeID string) (Envelope, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	env := s.envelopes[envelopeID]
	if env == nil {
		return Envelope{}, false
	}
	return env.snapshot(), true
}

// EventEnvelope returns the events_api envelope of the event of eventType
// (for example "message" or "app_mention") about the message ts.
func (s *Server) EventEnvelope(eventType, ts string) (Envelope, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, env := range s.envOrder {
		if env.typ == EnvelopeEventsAPI && env.about.Event.Type == eventType && env.about.Event.TS == ts {
			return env.snapshot(), true
		}
	}
	return Envelope{}, false
}

// Acks returns every ack read so far, oldest first.
func (s *Server) Acks() []Ack {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Ack, len(s.acks))
	for i, a := range s.acks {
		a.Payload = slices.Clone(a.Payload)
		out[i] = a
	}
	return out
}

// WaitForAcks waits until every envelope sent so far is acknowledged or
// given up on (after MaxRetries redeliveries). Call it before checking Acks
// or Envelopes: the events of the bot's own last messages are usually still
// in flight when WaitForMessages returns.
func (s *Server) WaitForAcks(ctx context.Context) error {
	return s.WaitFor(ctx, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, env := range s.envOrder {
			if !env.acked && !env.gaveUp {
				return false
			}
		}
		return true
	})
}

// NumConnections returns the number of open socket-mode connections.
func (s *Server) NumConnections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// WaitForConnections waits until at least n socket-mode connections are open.
func (s *Server) WaitForConnections(ctx context.Context, n int) error {
	return s.WaitFor(ctx, func() bool { return s.NumConnections() >= n })
}

// Disconnect sends {"type":"disconnect","reason":reason} on every open
// connection and then closes it, as Slack does before it refreshes a
// connection (https://docs.slack.dev/apis/events-api/using-socket-mode#disconnect).
// An empty reason means "refresh_requested". Clients are expected to
// reconnect with apps.connections.open; envelopes wait for them.
func (s *Server) Disconnect(reason string) {
	if reason == "" {
		reason = "refresh_requested"
	}
	msg, _ := json.Marshal(disconnectMessage{Type: "disconnect", Reason: reason, DebugInfo: debugInfo{Host: "emulator"}})
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		c.send(frame{data: msg, closeAfter: true})
	}
	s.conns = nil
	s.notifyLocked(Update{Kind: UpdateConnection})
}

// RequestDisconnect sends {"type":"disconnect","reason":reason} on every open
// connection and leaves it open for the client to close, as Slack does when it asks a
// client to move to a new connection and gives it time to (reason "warning",
// "refresh_requested", "link_disabled"; empty means "refresh_requested"). The
// connections get no new envelopes; acks still arrive on them until they close.
func (s *Server) RequestDisconnect(reason string) {
	if reason == "" {
		reason = "refresh_requested"
	}
	msg, _ := json.Marshal(disconnectMessage{Type: "disconnect", Reason: reason, DebugInfo: debugInfo{Host: "emulator"}})
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		c.send(frame{data: msg})
	}
	s.conns = nil
	s.notifyLocked(Update{Kind: UpdateConnection})
}

// CloseConnections drops every open connection without a disconnect
// message, like a network failure.
func (s *Server) CloseConnections() {
	s.mu.Lock()
	conns := s.conns
	s.conns = nil
	s.notifyLocked(Update{Kind: UpdateConnection})
	s.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
}
