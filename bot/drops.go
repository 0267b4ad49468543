package bot

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"
	"golang.org/x/net/proxy"
)

// dropReasons learns why the Socket Mode connection dropped, from what the connection
// itself carried (watchedConn): slack-go reconnects by itself and gives no event with
// the cause (the ConnectingEvent that follows has none), and its debug output, which
// has it, costs a re-encoding of every frame (docs/operations.md, "Deploy"). It is safe
// for concurrent use.
type dropReasons struct {
	mu sync.Mutex
	// requested is Slack's reason from a disconnect message ("" when none came since
	// the last take); cause is why a connection ended otherwise.
	requested, cause string
}

// take returns why the connection last dropped, and forgets it: Slack's reason when
// it asked for the reconnect ("slack_disconnect", its reason), what ended the
// connection otherwise ("connection_lost", see watchedConn), or fallback.
func (d *dropReasons) take(fallback string) (kind, reason string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	requested, cause := d.requested, d.cause
	d.requested, d.cause = "", ""
	switch {
	case requested != "":
		return "slack_disconnect", requested
	case cause != "":
		return "connection_lost", cause
	}
	return "connection_lost", fallback
}

func (d *dropReasons) setRequested(reason string) {
	d.mu.Lock()
	d.requested = reason
	d.mu.Unlock()
}

func (d *dropReasons) setCause(cause string) {
	d.mu.Lock()
	d.cause = cause
	d.mu.Unlock()
}

// socketPingInterval is how long slack-go waits for Slack's next WebSocket ping before
// it closes the connection (its default; New does not change it).
const socketPingInterval = 30 * time.Second

// socketDialer dials Slack's Socket Mode WebSocket for slack-go (socketmode.OptionDialer)
// and watches each connection it opens (watchedConn) for drops.
type socketDialer struct {
	drops *dropReasons
	// proxy picks the HTTP proxy of a connection (http.ProxyFromEnvironment:
	// HTTPS_PROXY, HTTP_PROXY, NO_PROXY), like slack-go's own dialer.
	proxy func(*http.Request) (*url.URL, error)
	// tlsConfig is the TLS configuration of wss:// connections (nil: the default).
	tlsConfig *tls.Config
}

// websocketDialer returns the gorilla Dialer slack-go dials with: slack-go's own
// settings (a 45 s handshake, a 32 KiB write buffer so that an ack is one frame, no
// compression), with the connection dialled here (the proxy and TLS included) so that
// watchedConn reads its frames in clear. gorilla's Proxy stays nil: it would tunnel
// through NetDialTLSContext, which expects the TLS connection to Slack itself.
func (s *socketDialer) websocketDialer() *websocket.Dialer {
	return &websocket.Dialer{
		HandshakeTimeout: 45 * time.Second,
		WriteBufferSize:  32 * 1024,
		NetDialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			c, err := s.dial(ctx, "http", addr)
			if err != nil {
				return nil, err
			}
			return s.watch(c), nil
		},
		NetDialTLSContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			c, err := s.dial(ctx, "https", addr)
			if err != nil {
				return nil, err
			}
			cfg := &tls.Config{}
			if s.tlsConfig != nil {
				cfg = s.tlsConfig.Clone()
			}
			// The handshake is HTTP/1.1: a configuration shared with an HTTP/2
			// client must not let the server pick h2.
			cfg.NextProtos = []string{"http/1.1"}
			if cfg.ServerName == "" {
				cfg.ServerName, _, _ = net.SplitHostPort(addr)
			}
			tc := tls.Client(c, cfg)
			if err := tc.HandshakeContext(ctx); err != nil {
				_ = c.Close()
				return nil, fmt.Errorf("tls handshake with %s: %w", addr, err)
			}
			return s.watch(tc), nil
		},
	}
}

// dial opens a TCP connection to addr (host:port) for a URL of scheme (http for
// ws://, https for wss://), through the proxy s.proxy picks: an HTTP proxy's tunnel
// (CONNECT) or a SOCKS5 proxy, the kinds gorilla's dialer supports.
func (s *socketDialer) dial(ctx context.Context, scheme, addr string) (net.Conn, error) {
	var nd net.Dialer
	var proxyURL *url.URL
	if s.proxy != nil {
		u, err := s.proxy(&http.Request{URL: &url.URL{Scheme: scheme, Host: addr}})
		if err != nil {
			return nil, fmt.Errorf("proxy for the socket mode connection: %w", err)
		}
		proxyURL = u
	}
	switch {
	case proxyURL == nil:
		return nd.DialContext(ctx, "tcp", addr)
	case proxyURL.Scheme == "http":
		return tunnel(ctx, proxyURL, addr)
	}
	pd, err := proxy.FromURL(proxyURL, &nd)
	if err != nil {
		return nil, fmt.Errorf("proxy for the socket mode connection: %w", err)
	}
	if cd, ok := pd.(proxy.ContextDialer); ok {
		return cd.DialContext(ctx, "tcp", addr)
	}
	return pd.Dial("tcp", addr)
}

// tunnel opens a tunnel to addr through the HTTP proxy at proxyURL (CONNECT, with
// its user and password as Basic credentials), as gorilla's dialer does. It gives up
// when ctx ends (ctx.Err()).
func tunnel(ctx context.Context, proxyURL *url.URL, addr string) (net.Conn, error) {
	hostPort := proxyURL.Host
	if proxyURL.Port() == "" {
		hostPort = net.JoinHostPort(proxyURL.Hostname(), "80")
	}
	var nd net.Dialer
	c, err := nd.DialContext(ctx, "tcp", hostPort)
	if err != nil {
		return nil, err
	}
	if deadline, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(deadline)
	}
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Now()) })
	req := &http.Request{Method: http.MethodConnect, URL: &url.URL{Opaque: addr}, Host: addr, Header: http.Header{}}
	if u := proxyURL.User; u != nil {
		if password, ok := u.Password(); ok {
			req.Header.Set("Proxy-Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(u.Username()+":"+password)))
		}
	}
	err = req.Write(c)
	var resp *http.Response
	if err == nil {
		// The proxy says nothing more until the client speaks: nothing is left
		// in the reader.
		resp, err = http.ReadResponse(bufio.NewReader(c), req)
	}
	if !stop() {
		err = ctx.Err()
	}
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("proxy %s refused the tunnel: %s", proxyURL.Host, resp.Status)
	}
	if err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("tunnel to %s: %w", addr, err)
	}
	_ = c.SetDeadline(time.Time{})
	return c, nil
}

// watch wraps c, a connection about to carry a WebSocket handshake.
func (s *socketDialer) watch(c net.Conn) net.Conn {
	return &watchedConn{Conn: c, drops: s.drops, start: time.Now()}
}

// watchedConn is a Socket Mode connection that tells dropReasons why it ended. It
// reads the frame headers of what slack-go reads (RFC 6455 §5.2: a few bytes a frame,
// the state kept across reads, no allocation), skips every payload unread, and keeps
// the payloads of three kinds of frames only: a text frame of maxWatchedText bytes at
// most, looked at for Slack's disconnect message (about 100 bytes; an envelope is
// larger and is never read here); a close frame, for its close code; a ping, for its
// time. The first thing that ends a connection is its cause: Slack's disconnect
// message (its reason, a word), Slack's close frame (its code, never its text), a read
// error (the error, which names addresses at most), or slack-go closing it (after no
// ping for socketPingInterval: a ping timeout). It tells it only once the handshake
// was accepted (see SetDeadline): a refused handshake is a connection error, not a
// drop. It relies on the frames coming uncompressed (the dialer asks for no
// compression) and in clear (it wraps the TLS connection, not the TCP one).
type watchedConn struct {
	net.Conn
	drops *dropReasons

	// mu guards the end: ended is set once the connection's first end was found,
	// accepted once the handshake was; an end found before the handshake was accepted
	// waits in pending (Slack's requested reason, or the cause) until it is.
	mu              sync.Mutex
	ended, accepted bool
	pending         [2]string
	// start is when the connection was dialled; lastPing is when Slack's last ping
	// came (or the handshake was accepted), in nanoseconds since start. Both are read
	// on the monotonic clock, so a step of the wall clock changes no ping's age.
	start    time.Time
	lastPing atomic.Int64

	// The reader's state, used by Read only.
	scan frameScanner
}

func (c *watchedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.scan.feed(c, p[:n])
	if err != nil {
		if errors.Is(err, io.EOF) {
			c.end("", "connection closed without a close frame (EOF)")
		} else {
			c.end("", "read failed: "+err.Error())
		}
	}
	return n, err
}

func (c *watchedConn) Close() error {
	if since := c.sincePing(); since > socketPingInterval {
		c.end("", fmt.Sprintf("ping timeout: no ping from Slack for %s", roundDuration(since)))
	} else {
		c.end("", "closed by slack-go")
	}
	return c.Conn.Close()
}

// SetDeadline sets c's deadline, and takes the zero time as the sign that the
// handshake was accepted: gorilla's dialer sets the handshake's deadline (the dialer
// has a HandshakeTimeout) and clears it once it accepted Slack's answer (status 101
// and the right Sec-WebSocket-Accept), and only then. Frames that came with the
// answer are followed before that, so an end found in them is told now.
func (c *watchedConn) SetDeadline(t time.Time) error {
	if t.IsZero() {
		c.mu.Lock()
		if !c.accepted {
			c.accepted = true
			c.pinged()
			if c.ended {
				c.tell(c.pending[0], c.pending[1])
			}
		}
		c.mu.Unlock()
	}
	return c.Conn.SetDeadline(t)
}

// sincePing returns how long ago Slack's last ping came (or the handshake was accepted).
func (c *watchedConn) sincePing() time.Duration {
	return time.Since(c.start) - time.Duration(c.lastPing.Load())
}

// pinged notes that a ping came now (or the handshake was accepted).
func (c *watchedConn) pinged() {
	c.lastPing.Store(int64(time.Since(c.start)))
}

// end tells dropReasons the connection's end, Slack's requested reason or its cause,
// unless an earlier end was found; before the handshake was accepted, it keeps the end
// in pending.
func (c *watchedConn) end(requested, cause string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return
	}
	c.ended = true
	if !c.accepted {
		c.pending = [2]string{requested, cause}
		return
	}
	c.tell(requested, cause)
}

// tell tells dropReasons the connection's end.
func (c *watchedConn) tell(requested, cause string) {
	if requested != "" {
		c.drops.setRequested(requested)
	} else {
		c.drops.setCause(cause)
	}
}

// maxWatchedText is the size of the largest text frame watchedConn reads, looking for
// Slack's disconnect message.
const maxWatchedText = 512

// WebSocket opcodes (RFC 6455 §5.2).
const (
	opText  = 0x1
	opClose = 0x8
	opPing  = 0x9
)

// frameScanner follows the WebSocket frames of a byte stream read in pieces of any
// size: first the HTTP answer to the handshake (up to its empty line), then frames.
type frameScanner struct {
	// line counts the bytes of the answer's current line (2 for any more), cr is set
	// when they are "\r", answered once the answer is over.
	line         int
	cr, answered bool
	// hdr holds the current frame's header, need its length once known (0 before its
	// second byte).
	hdr        [14]byte
	nhdr, need int
	// remaining is how much of the frame's payload is still to come; keep, whether it
	// goes to body.
	remaining int64
	opcode    byte
	keep      bool
	body      [maxWatchedText]byte
	nbody     int
}

// feed follows p, the next bytes of c's stream, and tells c what it learns.
func (s *frameScanner) feed(c *watchedConn, p []byte) {
	for len(p) > 0 {
		switch {
		case !s.answered:
			p = s.answer(p)
		case s.remaining > 0:
			n := int(min(int64(len(p)), s.remaining))
			if s.keep {
				s.nbody += copy(s.body[s.nbody:], p[:n])
			}
			p, s.remaining = p[n:], s.remaining-int64(n)
			if s.remaining == 0 {
				s.frame(c)
			}
		default:
			s.hdr[s.nhdr] = p[0]
			s.nhdr++
			p = p[1:]
			s.header(c)
		}
	}
}

// answer reads the HTTP answer to the handshake from p and returns what follows it.
// The answer ends at its first empty line, a line end being "\n" or "\r\n" as for
// http.ReadResponse. Frames follow it only if it is 101, which gorilla checks (see
// SetDeadline).
func (s *frameScanner) answer(p []byte) []byte {
	for i, b := range p {
		switch {
		case b == '\n' && (s.line == 0 || s.line == 1 && s.cr):
			s.answered = true
			return p[i+1:]
		case b == '\n':
			s.line, s.cr = 0, false
		default:
			s.cr = s.line == 0 && b == '\r'
			s.line = min(s.line+1, 2)
		}
	}
	return nil
}

// header takes the byte just added to the frame header, and starts the payload once
// the header is whole.
func (s *frameScanner) header(c *watchedConn) {
	if s.nhdr == 2 {
		s.need = 2
		switch s.hdr[1] & 0x7f {
		case 126:
			s.need += 2
		case 127:
			s.need += 8
		}
		if s.hdr[1]&0x80 != 0 {
			s.need += 4 // a masking key: servers send none
		}
	}
	if s.nhdr < 2 || s.nhdr < s.need {
		return
	}
	var length int64
	switch l := s.hdr[1] & 0x7f; l {
	case 126:
		length = int64(binary.BigEndian.Uint16(s.hdr[2:4]))
	case 127:
		length = int64(binary.BigEndian.Uint64(s.hdr[2:10]) & (1<<63 - 1))
	default:
		length = int64(l)
	}
	fin := s.hdr[0]&0x80 != 0
	s.opcode = s.hdr[0] & 0x0f
	s.keep = s.hdr[1]&0x80 == 0 && length <= maxWatchedText &&
		(s.opcode == opClose || s.opcode == opText && fin)
	s.remaining, s.nbody, s.nhdr, s.need = length, 0, 0, 0
	if length == 0 {
		s.frame(c)
	}
}

// frame tells c what the frame just read says.
func (s *frameScanner) frame(c *watchedConn) {
	switch {
	case s.opcode == opPing:
		c.pinged()
	case !s.keep:
	case s.opcode == opClose:
		code := 1005 // no status code (RFC 6455 §7.4.1)
		if s.nbody >= 2 {
			code = int(binary.BigEndian.Uint16(s.body[:2]))
		}
		c.end("", fmt.Sprintf("closed by Slack (close code %d)", code))
	case bytes.Contains(s.body[:s.nbody], []byte(`"disconnect"`)):
		// {"type":"disconnect","reason":"refresh_requested","debug_info":{…}}
		var m struct {
			Type   string `json:"type"`
			Reason string `json:"reason"`
		}
		if json.Unmarshal(s.body[:s.nbody], &m) == nil && m.Type == "disconnect" {
			c.end(reasonWord(m.Reason), "")
		}
	}
}

// reasonWord returns Slack's disconnect reason if it is a word (letters, digits, "_"
// and "-", 64 at most, such as refresh_requested), or "unknown".
func reasonWord(reason string) string {
	if reason == "" || len(reason) > 64 {
		return "unknown"
	}
	for _, r := range reason {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return "unknown"
		}
	}
	return reason
}

// connection follows the state of connection c from slack-go's events, and logs when
// it drops and when it is back, with c's number (connection) in each line.
func (b *Bot) connection(c *socketConn, evt socketmode.Event) {
	switch evt.Type {
	case socketmode.EventTypeConnecting:
		// slack-go connects again after the connection dropped or Slack asked for a
		// new one ("disconnect"); it sends no other event for either.
		e, _ := evt.Data.(*slack.ConnectingEvent)
		if e != nil && e.ConnectionCount > 0 {
			kind, reason := c.drops.take("connection closed")
			b.lost(c, kind, reason)
		}
		if e != nil && c.everConnected {
			c.log.Info("connecting to Slack in socket mode", "connection", c.n, "attempt", e.Attempt, "reconnect", e.ConnectionCount)
		}
	case socketmode.EventTypeDisconnect:
		b.lost(c, "slack_disconnect", "disconnect")
	case socketmode.EventTypeConnectionError:
		b.lost(c, "connection_error", "connection error")
		attrs := []any{"connection", c.n, "error", evt.Data}
		if e, _ := evt.Data.(*slack.ConnectionErrorEvent); e != nil {
			attrs = []any{"connection", c.n, "attempt", e.Attempt, "backoff", e.Backoff, "error", e.ErrorObj}
		}
		c.log.Warn("socket mode connection failed; slack-go retries", attrs...)
	case socketmode.EventTypeIncomingError:
		var err any = evt.Data
		if e, _ := evt.Data.(*slack.IncomingEventError); e != nil {
			err = e.ErrorObj
		}
		c.log.Warn("socket mode read failed", "connection", c.n, "error", err)
	case socketmode.EventTypeErrorWriteFailed:
		if w, _ := evt.Data.(*socketmode.ErrorWriteFailed); w != nil && w.Response != nil {
			c.log.Warn("ack not written; Slack delivers the envelope again", "connection", c.n, "envelope_id", w.Response.EnvelopeID, "error", w.Cause)
		}
	case socketmode.EventTypeConnected:
		if !c.everConnected {
			c.everConnected = true
			c.log.Info("connected to Slack in socket mode", "connection", c.n)
		} else if e, _ := evt.Data.(*socketmode.ConnectedEvent); e != nil {
			c.log.Info("socket mode connection open again; waiting for hello", "connection", c.n, "reconnect", e.ConnectionCount)
		}
	case socketmode.EventTypeHello:
		c.up.Store(true)
		if !c.downSince.IsZero() {
			down := time.Since(c.downSince)
			c.log.Warn(fmt.Sprintf("reconnected to Slack after %s", roundDuration(down)), "connection", c.n, "down_for", down)
			b.metrics().SocketReconnected()
			c.downSince = time.Time{}
		}
	}
}

// lost marks connection c down (once per drop) and logs why at warn: kind is
// slack_disconnect (Slack asked for a new connection; reason is Slack's, such as
// refresh_requested or link_disabled), connection_lost (reason is what ended it: Slack's
// close code, a read error, a ping timeout; docs/operations.md, "Deploy") or
// connection_error (opening one failed). Neither ever holds a token or a frame's
// content: Slack's reasons are words, and the errors name addresses at most.
func (b *Bot) lost(c *socketConn, kind, reason string) {
	c.up.Store(false)
	if !c.everConnected || !c.downSince.IsZero() {
		return
	}
	c.downSince = time.Now()
	c.log.Warn("lost the connection to Slack; reconnecting", "connection", c.n, "cause", kind, "reason", reason)
}

// roundDuration rounds d for a log line: to 100 ms from a second up, to the
// millisecond below.
func roundDuration(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Millisecond)
}
