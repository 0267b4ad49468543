package bot

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

const upgraded = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"

// wsFrame encodes a frame as a server sends it (unmasked).
func wsFrame(opcode byte, fin bool, payload []byte) []byte {
	b0 := opcode
	if fin {
		b0 |= 0x80
	}
	var h []byte
	switch n := len(payload); {
	case n < 126:
		h = []byte{b0, byte(n)}
	case n <= 0xffff:
		h = binary.BigEndian.AppendUint16([]byte{b0, 126}, uint16(n))
	default:
		h = binary.BigEndian.AppendUint64([]byte{b0, 127}, uint64(n))
	}
	return append(h, payload...)
}

func text(s string) []byte { return wsFrame(opText, true, []byte(s)) }

func closeFrame(code int) []byte {
	if code == 0 {
		return wsFrame(opClose, true, nil)
	}
	return wsFrame(opClose, true, append(binary.BigEndian.AppendUint16(nil, uint16(code)), "bye, with a secret"...))
}

// envelope is an events_api envelope of about size bytes whose text says what a
// disconnect message says.
func envelope(size int) []byte {
	head := `{"type":"events_api","envelope_id":"e1","payload":{"event":{"type":"message","text":"\"type\":\"disconnect\" `
	return text(head + strings.Repeat("x", max(0, size-len(head)-4)) + `"}}}`)
}

// scriptConn is a connection that reads stream in pieces of chunk bytes, then end.
type scriptConn struct {
	net.Conn
	stream []byte
	chunk  int
	end    error
}

func (c *scriptConn) Read(p []byte) (int, error) {
	if len(c.stream) == 0 {
		return 0, c.end
	}
	n := copy(p[:min(len(p), c.chunk)], c.stream)
	c.stream = c.stream[n:]
	return n, nil
}

func (c *scriptConn) Close() error { return nil }

func (c *scriptConn) SetDeadline(time.Time) error { return nil }

// accept does what gorilla's dialer does once it accepted the handshake.
func accept(c net.Conn) net.Conn {
	_ = c.SetDeadline(time.Time{})
	return c
}

// readAll reads c until it fails, as gorilla's reader would.
func readAll(c net.Conn) {
	buf := make([]byte, 4096)
	for {
		if _, err := c.Read(buf); err != nil {
			return
		}
	}
}

func TestWatchedConnCauses(t *testing.T) {
	hello := text(`{"type":"hello","num_connections":1,"debug_info":{"host":"applink-1"},"connection_info":{"app_id":"A1"}}`)
	ping := wsFrame(opPing, true, []byte("ping"))
	stream := func(frames ...[]byte) []byte {
		s := []byte(upgraded)
		for _, f := range frames {
			s = append(s, f...)
		}
		return s
	}
	for _, tc := range []struct {
		name   string
		stream []byte
		end    error
		// closed: slack-go closes the connection after the stream, pingAge after the
		// last ping.
		closed   bool
		pingAge  time.Duration
		kind     string
		reason   string
		fallback bool
	}{
		{name: "Disconnect", stream: stream(hello, ping, envelope(3000), envelope(70000), text(`{"type":"disconnect","reason":"link_disabled","debug_info":{"host":"applink-1"}}`)),
			end: io.EOF, kind: "slack_disconnect", reason: "link_disabled"},
		{name: "DisconnectWithoutReason", stream: stream(hello, text(`{"type":"disconnect"}`)), closed: true, end: io.EOF,
			kind: "slack_disconnect", reason: "unknown"},
		{name: "ReasonNotAWord", stream: stream(hello, text(`{"type":"disconnect","reason":"see <https://x>"}`)), end: io.EOF,
			kind: "slack_disconnect", reason: "unknown"},
		{name: "DisconnectInsideAnEnvelope", stream: stream(hello, envelope(200), text(`{"type":"events_api","payload":{"type":"disconnect"}}`)),
			end: io.EOF, kind: "connection_lost", reason: "connection closed without a close frame (EOF)"},
		{name: "CloseFrame", stream: stream(hello, envelope(5000), closeFrame(1001)), end: io.EOF,
			kind: "connection_lost", reason: "closed by Slack (close code 1001)"},
		{name: "CloseFrameWithoutCode", stream: stream(hello, closeFrame(0)), end: io.EOF,
			kind: "connection_lost", reason: "closed by Slack (close code 1005)"},
		{name: "ReadError", stream: stream(hello), end: errors.New("read tcp 10.0.0.1:1->10.0.0.2:443: connection reset by peer"),
			kind: "connection_lost", reason: "read failed: read tcp 10.0.0.1:1->10.0.0.2:443: connection reset by peer"},
		{name: "ClosedBySlackGo", stream: stream(hello, ping), closed: true, end: io.EOF,
			kind: "connection_lost", reason: "closed by slack-go"},
		{name: "PingTimeout", stream: stream(hello, ping), closed: true, pingAge: 40 * time.Second, end: io.EOF,
			kind: "connection_lost", reason: "ping timeout: no ping from Slack for 40s"},
		// A refused handshake is a connection error, whatever its body holds.
		{name: "HandshakeRefused", stream: append([]byte("HTTP/1.1 401 Unauthorized\r\nContent-Length: 4\r\n\r\n"), closeFrame(1001)...),
			closed: true, end: io.EOF, fallback: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Any split of the stream into reads gives the same cause.
			for _, chunk := range []int{1, 2, 3, 7, 13, 100, 4096, len(tc.stream)} {
				drops := &dropReasons{}
				c := (&socketDialer{drops: drops}).watch(&scriptConn{stream: tc.stream, chunk: chunk, end: tc.end})
				if !tc.fallback {
					accept(c)
				}
				if tc.closed {
					w := c.(*watchedConn)
					for len(w.Conn.(*scriptConn).stream) > 0 {
						_, _ = c.Read(make([]byte, 4096))
					}
					// Moving start back ages the last ping by as much (Add keeps
					// start's monotonic reading).
					w.start = w.start.Add(-tc.pingAge)
					_ = c.Close()
				}
				readAll(c)
				kind, reason := drops.take("fallback")
				if tc.fallback {
					tc.kind, tc.reason = "connection_lost", "fallback"
				}
				if kind != tc.kind || reason != tc.reason {
					t.Fatalf("chunk %d: %s %q; want %s %q", chunk, kind, reason, tc.kind, tc.reason)
				}
			}
		})
	}
}

// TestWatchedConnPingTimeOnTheMonotonicClock: a ping's time is kept as the time since
// the connection's start, both read on the monotonic clock, so that a step of the wall
// clock (NTP, a suspended VM) neither makes a ping timeout of a drop nor hides one.
func TestWatchedConnPingTimeOnTheMonotonicClock(t *testing.T) {
	s := append([]byte(upgraded), wsFrame(opPing, true, nil)...)
	c := (&socketDialer{drops: &dropReasons{}}).watch(&scriptConn{stream: s, chunk: 4096, end: io.EOF}).(*watchedConn)
	if c.start.Round(0) == c.start {
		t.Fatal("start has no monotonic reading")
	}
	readAll(c)
	if at, since := time.Duration(c.lastPing.Load()), time.Since(c.start); at < 0 || at > since {
		t.Fatalf("last ping at %d ns; want a time since the start, at most %s", at, since)
	}
}

// TestWatchedConnEverySplit: the disconnect message is found wherever the reads split
// the stream, whichever of "\r\n" and "\n" end the lines of the handshake's answer
// (http.ReadResponse takes both): it ends at its first empty line.
func TestWatchedConnEverySplit(t *testing.T) {
	for _, answer := range []string{upgraded, "HTTP/1.1 101 Switching Protocols\nUpgrade: websocket\n\n",
		"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\n", "HTTP/1.1 101 OK\nUpgrade: websocket\n\r\n"} {
		s := append(append([]byte(answer), envelope(300)...), text(`{"type":"disconnect","reason":"warning"}`)...)
		for i := 1; i < len(s); i++ {
			drops := &dropReasons{}
			readAll(accept((&socketDialer{drops: drops}).watch(&splitConn{parts: [][]byte{s[:i], s[i:]}})))
			if kind, reason := drops.take(""); kind != "slack_disconnect" || reason != "warning" {
				t.Fatalf("answer %q split at %d: %s %q", answer, i, kind, reason)
			}
		}
	}
}

// splitConn reads its parts, one a read, then io.EOF.
type splitConn struct {
	net.Conn
	parts [][]byte
}

func (c *splitConn) SetDeadline(time.Time) error { return nil }

func (c *splitConn) Read(p []byte) (int, error) {
	if len(c.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.parts[0])
	if c.parts[0] = c.parts[0][n:]; len(c.parts[0]) == 0 {
		c.parts = c.parts[1:]
	}
	return n, nil
}

// TestWatchedConnEndBeforeAcceptance: an end found before the handshake was accepted
// (in frames that came with the answer, or a read error) is told once it is, and
// never when the handshake is refused (the connection is then closed).
func TestWatchedConnEndBeforeAcceptance(t *testing.T) {
	hello := append([]byte(upgraded), text(`{"type":"hello"}`)...)
	for _, tc := range []struct {
		stream   []byte
		accepted bool
		reason   string
	}{
		{slices.Concat(hello, text(`{"type":"disconnect","reason":"warning"}`)), true, "warning"},
		{hello, true, "connection closed without a close frame (EOF)"},
		{slices.Concat(hello, closeFrame(1001)), false, "the last drop's cause"},
	} {
		drops := &dropReasons{}
		drops.setCause("the last drop's cause")
		c := (&socketDialer{drops: drops}).watch(&scriptConn{stream: tc.stream, chunk: 4096, end: io.EOF})
		readAll(c)
		if tc.accepted {
			accept(c)
		}
		_ = c.Close()
		if _, reason := drops.take(""); reason != tc.reason {
			t.Fatalf("%q; want %q", reason, tc.reason)
		}
	}
}

// handshakeServer is a WebSocket server that answers the handshake with line ends nl
// and the right Sec-WebSocket-Accept or a wrong one, sends frames in the same write,
// and waits for the client to close the connection. It returns its ws:// URL.
func handshakeServer(t *testing.T, nl string, rightKey bool, frames []byte) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		br := bufio.NewReader(c)
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		sum := sha1.Sum([]byte(req.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
		key := base64.StdEncoding.EncodeToString(sum[:])
		if !rightKey {
			key = "d3Jvbmc="
		}
		answer := "HTTP/1.1 101 Switching Protocols" + nl + "Upgrade: websocket" + nl + "Connection: Upgrade" + nl +
			"Sec-WebSocket-Accept: " + key + nl + nl
		_, _ = c.Write(append([]byte(answer), frames...))
		_, _ = io.Copy(io.Discard, br)
	}()
	return "ws://" + ln.Addr().String() + "/link"
}

// TestSocketDialerRefusedHandshake: a handshake gorilla refuses after Slack's 101 (a
// wrong Sec-WebSocket-Accept) is a connection error that tells no cause, so the cause
// of the drop before it stays, even when frames came with the answer.
func TestSocketDialerRefusedHandshake(t *testing.T) {
	for _, frames := range [][]byte{nil, append(text(`{"type":"hello"}`), closeFrame(1011)...)} {
		drops := &dropReasons{}
		drops.setCause("closed by Slack (close code 1001)")
		_, _, err := (&socketDialer{drops: drops}).websocketDialer().DialContext(context.Background(),
			handshakeServer(t, "\r\n", false, frames), nil)
		if !errors.Is(err, websocket.ErrBadHandshake) {
			t.Fatalf("dial: %v; want a bad handshake", err)
		}
		if kind, reason := drops.take(""); reason != "closed by Slack (close code 1001)" {
			t.Fatalf("%d bytes of frames: %s %q; want the last drop's cause", len(frames), kind, reason)
		}
	}
}

// TestSocketDialerDisconnectWithTheAnswer: Slack's disconnect message in the same read
// as the answer to the handshake is told once gorilla accepted it, whether the answer's
// lines end in "\r\n" or in "\n" (which http.ReadResponse accepts too).
func TestSocketDialerDisconnectWithTheAnswer(t *testing.T) {
	for _, nl := range []string{"\r\n", "\n"} {
		drops := &dropReasons{}
		frames := append(text(`{"type":"hello"}`), text(`{"type":"disconnect","reason":"refresh_requested"}`)...)
		ws, _, err := (&socketDialer{drops: drops}).websocketDialer().DialContext(context.Background(),
			handshakeServer(t, nl, true, frames), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"hello", "disconnect"} {
			if _, msg, err := ws.ReadMessage(); err != nil || !strings.Contains(string(msg), want) {
				t.Fatalf("line end %q: read %q, %v; want %s", nl, msg, err, want)
			}
		}
		_ = ws.Close()
		if kind, reason := drops.take(""); kind != "slack_disconnect" || reason != "refresh_requested" {
			t.Fatalf("line end %q: %s %q", nl, kind, reason)
		}
	}
}

// FuzzWatchedConn: what watchedConn tells of a stream read in pieces is what a parser
// of the whole stream finds (referenceEnd).
func FuzzWatchedConn(f *testing.F) {
	f.Add([]byte(upgraded+"\x81\x05hello"), uint8(1))
	f.Add(append([]byte("HTTP/1.1 101 OK\n\n"), text(`{"type":"disconnect","reason":"warning"}`)...), uint8(7))
	f.Add(append(append([]byte(upgraded), envelope(600)...), closeFrame(1001)...), uint8(60))
	f.Fuzz(func(t *testing.T, s []byte, chunk uint8) {
		drops := &dropReasons{}
		readAll(accept((&socketDialer{drops: drops}).watch(&scriptConn{stream: s, chunk: int(chunk%64) + 1, end: io.EOF})))
		if kind, reason := drops.take(""); kind+" "+reason != referenceEnd(s) {
			t.Fatalf("%s %q; want %s", kind, reason, referenceEnd(s))
		}
	})
}

// referenceEnd returns the end ("kind reason") of stream s, read to io.EOF, parsed whole.
func referenceEnd(s []byte) string {
	eof := "connection_lost connection closed without a close frame (EOF)"
	for {
		i := bytes.IndexByte(s, '\n')
		if i < 0 {
			return eof
		}
		line := s[:i]
		if s = s[i+1:]; len(line) == 0 || string(line) == "\r" {
			break
		}
	}
	for len(s) >= 2 {
		masked, n, head := s[1]&0x80 != 0, int64(s[1]&0x7f), 2+int(s[1]>>7)*4
		if n >= 126 {
			head += 2 + int(n-126)*6
		}
		if len(s) < head {
			break
		} else if n == 126 {
			n = int64(binary.BigEndian.Uint16(s[2:]))
		} else if n == 127 {
			n = int64(binary.BigEndian.Uint64(s[2:]) & (1<<63 - 1))
		}
		if int64(len(s)-head) < n {
			break
		}
		op, payload := s[0], s[head:head+int(n)]
		s = s[head+int(n):]
		var m struct{ Type, Reason string }
		switch {
		case masked || n > maxWatchedText:
		case op&0x0f == opClose && n < 2:
			return "connection_lost closed by Slack (close code 1005)"
		case op&0x0f == opClose:
			return fmt.Sprintf("connection_lost closed by Slack (close code %d)", binary.BigEndian.Uint16(payload))
		case op == 0x80|opText && bytes.Contains(payload, []byte(`"disconnect"`)) &&
			json.Unmarshal(payload, &m) == nil && m.Type == "disconnect":
			return "slack_disconnect " + reasonWord(m.Reason)
		}
	}
	return eof
}

// TestSocketDialer dials a WebSocket server (ws:// and wss://, straight and through
// an HTTP proxy's tunnel) with the dialer slack-go is given: the connection works, the
// proxy is asked with its credentials, and Slack's disconnect message is seen in the
// frames read from the TLS connection.
func TestSocketDialer(t *testing.T) {
	handler := http.HandlerFunc(slackSocket)
	plain := httptest.NewServer(handler)
	defer plain.Close()
	secure := httptest.NewTLSServer(handler)
	defer secure.Close()
	roots := x509.NewCertPool()
	roots.AddCert(secure.Certificate())

	tunnels := make(chan string, 10)
	proxySrv := httptest.NewServer(connectProxy(t, tunnels))
	defer proxySrv.Close()
	proxyURL, _ := url.Parse(proxySrv.URL)
	proxyURL.User = url.UserPassword("bot", "s3cret")

	for _, tc := range []struct {
		name  string
		url   string
		proxy bool
	}{
		{"ws", "ws" + strings.TrimPrefix(plain.URL, "http"), false},
		{"wss", "wss" + strings.TrimPrefix(secure.URL, "https"), false},
		{"wsViaProxy", "ws" + strings.TrimPrefix(plain.URL, "http"), true},
		{"wssViaProxy", "wss" + strings.TrimPrefix(secure.URL, "https"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			drops := &dropReasons{}
			d := &socketDialer{drops: drops, tlsConfig: &tls.Config{RootCAs: roots}}
			if tc.proxy {
				d.proxy = http.ProxyURL(proxyURL)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			ws, _, err := d.websocketDialer().DialContext(ctx, tc.url, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer ws.Close()
			for _, want := range []string{"hello", "disconnect"} {
				if _, msg, err := ws.ReadMessage(); err != nil || !strings.Contains(string(msg), want) {
					t.Fatalf("read %q, %v; want %s", msg, err, want)
				}
			}
			if kind, reason := drops.take(""); kind != "slack_disconnect" || reason != "refresh_requested" {
				t.Errorf("%s %q", kind, reason)
			}
			if tc.proxy {
				u, _ := url.Parse(tc.url)
				if got := <-tunnels; got != u.Host {
					t.Errorf("tunnel to %q; want %q", got, u.Host)
				}
			}
		})
	}
	if len(tunnels) != 0 {
		t.Errorf("%d more tunnels than connections through the proxy", len(tunnels))
	}
}

// slackSocket is a WebSocket server that says hello, then asks for a new connection.
func slackSocket(w http.ResponseWriter, r *http.Request) {
	ws, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer ws.Close()
	_ = ws.WriteMessage(websocket.TextMessage, []byte(`{"type":"hello"}`))
	_ = ws.WriteMessage(websocket.TextMessage, []byte(`{"type":"disconnect","reason":"refresh_requested"}`))
	_, _, _ = ws.ReadMessage()
}

// connectProxy is an HTTP proxy that opens tunnels (CONNECT) for the user bot, and
// sends each tunnel's target to tunnels.
func connectProxy(t *testing.T, tunnels chan<- string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		want := "Basic " + base64.StdEncoding.EncodeToString([]byte("bot:s3cret"))
		if r.Method != http.MethodConnect || r.Header.Get("Proxy-Authorization") != want {
			http.Error(w, "no", http.StatusProxyAuthRequired)
			return
		}
		target, err := net.Dial("tcp", r.Host)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		tunnels <- r.Host
		client, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		_, _ = io.WriteString(client, "HTTP/1.1 200 Connection established\r\n\r\n")
		var wg sync.WaitGroup
		wg.Go(func() { _, _ = io.Copy(target, bufio.NewReader(rw)); _ = target.Close() })
		_, _ = io.Copy(client, target)
		_ = client.Close()
		wg.Wait()
	})
}

// TestSocketDialerWithoutHTTP2: a TLS configuration that offers h2 (one shared with an
// HTTP/2 client) still dials a server that speaks HTTP/2: the handshake is HTTP/1.1.
func TestSocketDialerWithoutHTTP2(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(slackSocket))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	drops := &dropReasons{}
	d := &socketDialer{drops: drops, tlsConfig: &tls.Config{RootCAs: roots, NextProtos: []string{"h2", "http/1.1"}}}
	ws, _, err := d.websocketDialer().DialContext(context.Background(), "wss"+strings.TrimPrefix(srv.URL, "https"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	for range 2 {
		if _, msg, err := ws.ReadMessage(); err != nil {
			t.Fatalf("read %q, %v", msg, err)
		}
	}
	if kind, reason := drops.take(""); kind != "slack_disconnect" || reason != "refresh_requested" {
		t.Fatalf("%s %q", kind, reason)
	}
	if d.tlsConfig.NextProtos[0] != "h2" {
		t.Fatal("the dialer changed its caller's TLS configuration")
	}
}

// TestTunnelRefused: a proxy's refusal is an error that names the proxy and its answer.
func TestTunnelRefused(t *testing.T) {
	proxySrv := httptest.NewServer(connectProxy(t, nil))
	defer proxySrv.Close()
	proxyURL, _ := url.Parse(proxySrv.URL)
	d := &socketDialer{drops: &dropReasons{}, proxy: http.ProxyURL(proxyURL)}
	_, _, err := d.websocketDialer().DialContext(context.Background(), "ws://slack.example:80/link", nil)
	if err == nil || !strings.Contains(err.Error(), "407") {
		t.Fatalf("%v; want the proxy's 407", err)
	}
}

// TestTunnelCancelled: cancelling the dial's context (one without a deadline) ends a
// tunnel whose proxy does not answer.
func TestTunnelCancelled(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	asked := make(chan struct{})
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		br := bufio.NewReader(c)
		if _, err := http.ReadRequest(br); err == nil {
			close(asked)
		}
		_, _ = io.Copy(io.Discard, br) // until the client closes the connection
	}()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := tunnel(ctx, &url.URL{Scheme: "http", Host: ln.Addr().String()}, "slack.example:443")
		done <- err
	}()
	<-asked
	cancel() // without it, the tunnel would wait for the proxy until the test's timeout
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("%v; want context.Canceled", err)
	}
}

// BenchmarkWatchedConn measures watchedConn's work per frame: the frames of 1,000
// envelopes of 2.5 KB (about what the emulator sends for a message), read in pieces of
// 4 KiB as gorilla's reader reads them, on a connection that only copies bytes. The
// same reads of a bare connection ("bare") give the copy's own cost.
func BenchmarkWatchedConn(b *testing.B) {
	s := []byte(upgraded)
	for range 1000 {
		s = append(s, envelope(2500)...)
	}
	for _, watched := range []bool{false, true} {
		b.Run(fmt.Sprintf("watched=%t", watched), func(b *testing.B) {
			b.ReportAllocs()
			buf := make([]byte, 4096)
			frames := 0
			for b.Loop() {
				var c net.Conn = &scriptConn{stream: s, chunk: 4096, end: io.EOF}
				if watched {
					c = (&socketDialer{drops: &dropReasons{}}).watch(c)
				}
				for {
					if _, err := c.Read(buf); err != nil {
						break
					}
				}
				frames += 1000
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(frames), "ns/frame")
		})
	}
}
