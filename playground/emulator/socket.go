package emulator

import (
	"context"
	"encoding/json"
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

// connections are the open Socket Mode connections: it admits them with a
// ticket from apps.connections.open, says hello, writes their frames and
// pings, reads the acks and tells its queue about both.
type connections struct {
	ws    *workspace
	queue envelopeQueue
	wg    sync.WaitGroup // connection goroutines

	// Guarded by ws.mu.
	conns    []*conn // open socket-mode connections, in connection order
	nextConn int     // round-robin cursor into conns
	tickets  map[string]bool
}

// envelopeQueue is told what happens to envelopes on the connections: a
// frame of one was written, an ack was read, or a connection opened for the
// envelopes waiting for one (with the lock held).
type envelopeQueue interface {
	markSent(envelopeID string, attempt int)
	handleAck(envelopeID string, payload json.RawMessage, readAt time.Time)
	flushLocked()
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
func (cs *connections) methods() map[string]method {
	return map[string]method{
		"apps.connections.open": {handle: cs.appsConnectionsOpen, appToken: true},
	}
}

// appsConnectionsOpen implements apps.connections.open: a one-use WebSocket
// URL for Socket Mode (https://docs.slack.dev/reference/methods/apps.connections.open).
func (cs *connections) appsConnectionsOpen(*request) (object, error) {
	ticket := newUUID()
	cs.tickets[ticket] = true
	u := "ws" + cs.ws.base[len("http"):] + "/link/?" + url.Values{"ticket": {ticket}, "app_id": {cs.ws.cfg.AppID}}.Encode()
	return object{"url": u}, nil
}

// serveSocket accepts a socket-mode WebSocket, says hello and starts the
// connection's reader and writer. An upgrade from another web page's origin
// is refused before its ticket is used (checkSocketOrigin).
func (cs *connections) serveSocket(w http.ResponseWriter, r *http.Request) {
	if !checkSocketOrigin(r) {
		http.Error(w, "cross-origin WebSocket refused", http.StatusForbidden)
		return
	}
	if !cs.admit(w, r.URL.Query().Get("ticket")) {
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
	cs.open(&conn{ws: ws, out: make(chan frame, connQueue), done: make(chan struct{})})
}

// admit uses up ticket and answers 401 when it is not valid, or 429 when
// MaxConnections are open.
func (cs *connections) admit(w http.ResponseWriter, ticket string) bool {
	cs.ws.mu.Lock()
	valid := cs.tickets[ticket]
	delete(cs.tickets, ticket)
	full := len(cs.conns) >= cs.ws.cfg.MaxConnections
	cs.ws.mu.Unlock()
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
func (cs *connections) open(c *conn) {
	cs.ws.mu.Lock()
	defer cs.ws.mu.Unlock()
	if cs.ws.closed || len(cs.conns) >= cs.ws.cfg.MaxConnections {
		_ = c.ws.Close()
		return
	}
	c.id = int(cs.ws.nextSeqLocked())
	cs.conns = append(cs.conns, c)
	hello, _ := json.Marshal(helloMessage{
		Type:           "hello",
		NumConnections: len(cs.conns),
		DebugInfo:      debugInfo{Host: "emulator", BuildNumber: 1, ApproximateConnectionTime: 18060},
		ConnectionInfo: connectionInfo{AppID: cs.ws.cfg.AppID},
	})
	c.send(frame{data: hello})
	cs.wg.Add(2)
	go cs.writeLoop(c)
	go cs.readLoop(c)

	cs.queue.flushLocked()
	cs.ws.notifyLocked(Update{Kind: UpdateConnection})
}

func (cs *connections) writeLoop(c *conn) {
	defer cs.wg.Done()
	defer c.close()
	ping := time.NewTicker(cs.ws.cfg.PingInterval)
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
				cs.queue.markSent(f.envelopeID, f.attempt)
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

func (cs *connections) readLoop(c *conn) {
	defer cs.wg.Done()
	defer cs.dropConn(c)
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
			cs.ws.cfg.Logger.Warn("emulator: unreadable frame from the bot", "conn", c.id, "frame", string(data))
			continue
		}
		cs.queue.handleAck(ack.EnvelopeID, ack.Payload, readAt)
	}
}

// dropConn forgets a closed connection; its unacknowledged envelopes are
// redelivered elsewhere when their ack timeout fires.
func (cs *connections) dropConn(c *conn) {
	c.close()
	cs.ws.mu.Lock()
	defer cs.ws.mu.Unlock()
	if i := slices.Index(cs.conns, c); i >= 0 {
		cs.conns = slices.Delete(cs.conns, i, i+1)
		cs.ws.notifyLocked(Update{Kind: UpdateConnection})
	}
}

// nextConnLocked picks the connection of the next frame, round-robin; nil
// when none is open.
func (cs *connections) nextConnLocked() *conn {
	if len(cs.conns) == 0 {
		return nil
	}
	c := cs.conns[cs.nextConn%len(cs.conns)]
	cs.nextConn++
	return c
}

// SendRaw writes data as one text frame to one connection, unchecked, for
// tests of frames that are not envelopes at all.
func (cs *connections) SendRaw(data []byte) error {
	cs.ws.mu.Lock()
	defer cs.ws.mu.Unlock()
	c := cs.nextConnLocked()
	if c == nil {
		return ErrNoConnection
	}
	c.send(frame{data: slices.Clone(data)})
	return nil
}

// NumConnections returns the number of open socket-mode connections.
func (cs *connections) NumConnections() int {
	cs.ws.mu.Lock()
	defer cs.ws.mu.Unlock()
	return len(cs.conns)
}

// WaitForConnections waits until at least n socket-mode connections are open.
func (cs *connections) WaitForConnections(ctx context.Context, n int) error {
	return cs.ws.WaitFor(ctx, func() bool { return cs.NumConnections() >= n })
}

// Disconnect sends {"type":"disconnect","reason":reason} on every open
// connection and then closes it, as Slack does before it refreshes a
// connection (https://docs.slack.dev/apis/events-api/using-socket-mode#disconnect).
// An empty reason means "refresh_requested". Clients are expected to
// reconnect with apps.connections.open; envelopes wait for them.
func (cs *connections) Disconnect(reason string) { cs.disconnect(reason, true) }

// RequestDisconnect sends {"type":"disconnect","reason":reason} on every open
// connection and leaves it open for the client to close, as Slack does when it asks a
// client to move to a new connection and gives it time to (reason "warning",
// "refresh_requested", "link_disabled"; empty means "refresh_requested"). The
// connections get no new envelopes; acks still arrive on them until they close.
func (cs *connections) RequestDisconnect(reason string) { cs.disconnect(reason, false) }

// disconnect sends a disconnect message on every open connection, closing
// it after the message when closeAfter, and gives it no more envelopes.
func (cs *connections) disconnect(reason string, closeAfter bool) {
	if reason == "" {
		reason = "refresh_requested"
	}
	msg, _ := json.Marshal(disconnectMessage{Type: "disconnect", Reason: reason, DebugInfo: debugInfo{Host: "emulator"}})
	cs.ws.mu.Lock()
	defer cs.ws.mu.Unlock()
	for _, c := range cs.conns {
		c.send(frame{data: msg, closeAfter: closeAfter})
	}
	cs.conns = nil
	cs.ws.notifyLocked(Update{Kind: UpdateConnection})
}

// CloseConnections drops every open connection without a disconnect
// message, like a network failure.
func (cs *connections) CloseConnections() {
	cs.ws.mu.Lock()
	conns := cs.conns
	cs.conns = nil
	cs.ws.notifyLocked(Update{Kind: UpdateConnection})
	cs.ws.mu.Unlock()
	for _, c := range conns {
		c.close()
	}
}
