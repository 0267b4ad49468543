package emulator

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Socket Mode (https://docs.slack.dev/apis/events-api/using-socket-mode):
// the bot opens WebSocket connections with a ticket from
// apps.connections.open; every envelope goes to one of them, round-robin, and
// is delivered again when its ack is late.

const (
	writeWait    = 10 * time.Second
	connQueue    = 1024    // frames waiting to be written on one connection
	maxAckLength = 1 << 20 // bytes of one frame read from the bot
)

// socketHub is the Socket Mode side of the emulator: the open connections,
// the envelopes sent on them and the acks read back.
type socketHub struct {
	ws *workspace
	wg sync.WaitGroup // connection goroutines

	// Guarded by ws.mu.
	conns     []*conn // open socket-mode connections, in connection order
	nextConn  int     // round-robin cursor into conns
	tickets   map[string]bool
	envelopes map[string]*envelope
	envOrder  []*envelope
	pending   []*envelope // waiting for a connection
	acks      []Ack
}

func newSocketHub(ws *workspace) *socketHub {
	return &socketHub{ws: ws, tickets: make(map[string]bool), envelopes: make(map[string]*envelope)}
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

// methods is the Web API method of Socket Mode.
func (h *socketHub) methods() map[string]method {
	return map[string]method{
		"apps.connections.open": {handle: h.appsConnectionsOpen, appToken: true},
	}
}

// appsConnectionsOpen implements apps.connections.open: a one-use WebSocket
// URL for Socket Mode (https://docs.slack.dev/reference/methods/apps.connections.open).
func (h *socketHub) appsConnectionsOpen(*request) (object, error) {
	ticket := newUUID()
	h.tickets[ticket] = true
	u := "ws" + h.ws.base[len("http"):] + "/link/?" + url.Values{"ticket": {ticket}, "app_id": {h.ws.cfg.AppID}}.Encode()
	return object{"url": u}, nil
}

// serveSocket accepts a socket-mode WebSocket, says hello and starts the
// connection's reader and writer. An upgrade from another web page's origin
// is refused before its ticket is used (checkSocketOrigin).
func (h *socketHub) serveSocket(w http.ResponseWriter, r *http.Request) {
	if !checkSocketOrigin(r) {
		http.Error(w, "cross-origin WebSocket refused", http.StatusForbidden)
		return
	}
	if !h.admit(w, r.URL.Query().Get("ticket")) {
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
	h.open(&conn{ws: ws, out: make(chan frame, connQueue), done: make(chan struct{})})
}

// admit uses up ticket and answers 401 when it is not valid, or 429 when
// MaxConnections are open.
func (h *socketHub) admit(w http.ResponseWriter, ticket string) bool {
	h.ws.mu.Lock()
	valid := h.tickets[ticket]
	delete(h.tickets, ticket)
	full := len(h.conns) >= h.ws.cfg.MaxConnections
	h.ws.mu.Unlock()
	switch {
	case !valid:
		http.Error(w, "invalid or used ticket; call apps.connections.open", http.StatusUnauthorized)
		return false
	case full:
		http.Error(w, "too many socket-mode connections", http.StatusTooManyRequests)
		return false
	}
	return true
}

// open adds an upgraded connection, says hello, starts its writer and reader
// and hands it the envelopes waiting for a connection.
func (h *socketHub) open(c *conn) {
	h.ws.mu.Lock()
	defer h.ws.mu.Unlock()
	if h.ws.closed || len(h.conns) >= h.ws.cfg.MaxConnections {
		_ = c.ws.Close()
		return
	}
	c.id = int(h.ws.nextSeqLocked())
	h.conns = append(h.conns, c)
	hello, _ := json.Marshal(helloMessage{
		Type:           "hello",
		NumConnections: len(h.conns),
		DebugInfo:      debugInfo{Host: "emulator", BuildNumber: 1, ApproximateConnectionTime: 18060},
		ConnectionInfo: connectionInfo{AppID: h.ws.cfg.AppID},
	})
	c.send(frame{data: hello})
	h.wg.Add(2)
	go h.writeLoop(c)
	go h.readLoop(c)

	pending := h.pending
	h.pending = nil
	for _, env := range pending {
		h.enqueueLocked(env)
	}
	h.ws.notifyLocked(Update{Kind: UpdateConnection})
}

func (h *socketHub) writeLoop(c *conn) {
	defer h.wg.Done()
	defer c.close()
	ping := time.NewTicker(h.ws.cfg.PingInterval)
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
				h.markSent(f.envelopeID, f.attempt)
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

func (h *socketHub) readLoop(c *conn) {
	defer h.wg.Done()
	defer h.dropConn(c)
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
			h.ws.cfg.Logger.Warn("emulator: unreadable frame from the bot", "conn", c.id, "frame", string(data))
			continue
		}
		h.handleAck(ack.EnvelopeID, ack.Payload, readAt)
	}
}

// dropConn forgets a closed connection; its unacknowledged envelopes are
// redelivered elsewhere when their ack timeout fires.
func (h *socketHub) dropConn(c *conn) {
	c.close()
	h.ws.mu.Lock()
	defer h.ws.mu.Unlock()
	if i := slices.Index(h.conns, c); i >= 0 {
		h.conns = slices.Delete(h.conns, i, i+1)
		h.ws.notifyLocked(Update{Kind: UpdateConnection})
	}
}

// nextConnLocked picks the connection of the next frame, round-robin; nil
// when none is open.
func (h *socketHub) nextConnLocked() *conn {
	if len(h.conns) == 0 {
		return nil
	}
	c := h.conns[h.nextConn%len(h.conns)]
	h.nextConn++
	return c
}

func (h *socketHub) markSent(id string, attempt int) {
	h.ws.mu.Lock()
	defer h.ws.mu.Unlock()
	env := h.envelopes[id]
	if env == nil {
		return
	}
	env.sentAt = time.Now()
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
func (h *socketHub) enqueueLocked(env *envelope) {
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
	c.send(frame{data: data, envelopeID: env.id, attempt: env.attempt})
	env.stopTimer()
	attempt := env.attempt
	env.timer = time.AfterFunc(h.ws.cfg.AckTimeout, func() { h.ackTimedOut(env, attempt) })
}

// sendLocked delivers env, or answers ErrClosed once the server is closed.
func (h *socketHub) sendLocked(env *envelope) (envelopeID string, err error) {
	if h.ws.closed {
		return "", ErrClosed
	}
	h.enqueueLocked(env)
	return env.id, nil
}

// ackTimedOut redelivers an envelope still unacknowledged after AckTimeout,
// with retry_attempt+1 and retry_reason "timeout", up to MaxRetries times.
func (h *socketHub) ackTimedOut(env *envelope, attempt int) {
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

// SendRaw writes data as one text frame to one connection, unchecked, for
// tests of frames that are not envelopes at all.
func (h *socketHub) SendRaw(data []byte) error {
	h.ws.mu.Lock()
	defer h.ws.mu.Unlock()
	c := h.nextConnLocked()
	if c == nil {
		return ErrNoConnection
	}
	c.send(frame{data: slices.Clone(data)})
	return nil
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

// NumConnections returns the number of open socket-mode connections.
func (h *socketHub) NumConnections() int {
	h.ws.mu.Lock()
	defer h.ws.mu.Unlock()
	return len(h.conns)
}

// WaitForConnections waits until at least n socket-mode connections are open.
func (h *socketHub) WaitForConnections(ctx context.Context, n int) error {
	return h.ws.WaitFor(ctx, func() bool { return h.NumConnections() >= n })
}

// Disconnect sends {"type":"disconnect","reason":reason} on every open
// connection and then closes it, as Slack does before it refreshes a
// connection (https://docs.slack.dev/apis/events-api/using-socket-mode#disconnect).
// An empty reason means "refresh_requested". Clients are expected to
// reconnect with apps.connections.open; envelopes wait for them.
func (h *socketHub) Disconnect(reason string) { h.disconnect(reason, true) }

// RequestDisconnect sends {"type":"disconnect","reason":reason} on every open
// connection and leaves it open for the client to close, as Slack does when it asks a
// client to move to a new connection and gives it time to (reason "warning",
// "refresh_requested", "link_disabled"; empty means "refresh_requested"). The
// connections get no new envelopes; acks still arrive on them until they close.
func (h *socketHub) RequestDisconnect(reason string) { h.disconnect(reason, false) }

// disconnect sends a disconnect message on every open connection, closing
// it after the message when closeAfter, and gives it no more envelopes.
func (h *socketHub) disconnect(reason string, closeAfter bool) {
	if reason == "" {
		reason = "refresh_requested"
	}
	msg, _ := json.Marshal(disconnectMessage{Type: "disconnect", Reason: reason, DebugInfo: debugInfo{Host: "emulator"}})
	h.ws.mu.Lock()
	defer h.ws.mu.Unlock()
	for _, c := range h.conns {
		c.send(frame{data: msg, closeAfter: closeAfter})
	}
	h.conns = nil
	h.ws.notifyLocked(Update{Kind: UpdateConnection})
}

// CloseConnections drops every open connection without a disconnect
// message, like a network failure.
func (h *socketHub) CloseConnections() {
	h.ws.mu.Lock()
	conns := h.conns
	h.conns = nil
	h.ws.notifyLocked(Update{Kind: UpdateConnection})
	h.ws.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
}
