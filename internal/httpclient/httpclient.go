package httpclient

import (
	"net"
	"net/http"
	"time"
)

// Settings of NewTransport.
const (
	// MaxIdleConns is how many idle connections are kept, across hosts.
	MaxIdleConns = 256
	// MaxIdleConnsPerHost is how many idle connections are kept to one host. Over
	// HTTP/2 (Slack, OpenAI) calls share a few connections; over HTTP/1.1 (a local
	// model server, the emulator) each call in flight holds one, and a burst of
	// calls beyond this many would open connections that are closed once idle,
	// unless the connections are bounded too: NewSlack bounds them, and keeps them
	// all (SlackConnsPerHost); the model client keeps as many idle as it lets calls be
	// in flight (agents.ClientConfig.MaxConcurrent).
	MaxIdleConnsPerHost = 128
	// SlackConnsPerHost bounds the connections NewSlack's transport holds to one
	// host, dialling, busy or idle (http.Transport.MaxConnsPerHost): a call beyond
	// them waits for one to come free, which over HTTP/1.1 is a call's round trip
	// (a millisecond to the emulator, a few hundred to Slack: 16 connections carry
	// 50 or more calls a second, more than Slack's per-method rate limits let
	// through for long), instead of dialling a connection that is closed again as
	// soon as it is idle. Unbounded, BenchmarkSlackBurst (rounds of 1,000 concurrent
	// calls) dialled about 900 connections a round; bounded, none after the first.
	// Over HTTP/1.1 it also bounds the calls in flight, and so the goroutines that
	// wake at once when their answers come: with 128, the turns of a burst that
	// finish together woke 128 calls' goroutines at a time, and every Socket Mode
	// envelope read meanwhile waited behind them for a core (BenchmarkBurst, 1,000
	// mentions on 2 cores, SQLite, 4 interleaved pairs: the acks of the envelopes
	// that came while the answers were posted, p99 48 ms with 16 against 159 ms with
	// 128, all envelopes 81 against 130 ms, the last answer as late; at 3,000 on
	// Postgres, the turns waiting for a connection hold about 60 MiB more at the
	// peak; docs/operations.md, "Numbers"). Over HTTP/2 (Slack's API) it bounds
	// connections, not calls: one carries as many calls at once as the server allows
	// (about 100). Past that, and in a burst before the first connection's handshake
	// said HTTP/2, Go dials a connection per waiting call, up to this bound, and
	// closes the ones it does not need (TestSlackHTTP2; the program's first call,
	// auth.test, is made alone). http.HTTP2Config.StrictMaxConcurrentRequests would
	// make them wait instead, but calls hung with it when TestSlackHTTP2's server
	// allowed 50 streams (Go 1.26), so it is left off. The cost of the bound is over
	// HTTP/1.1: 16 slow calls in flight (an emulator with latency, a proxy that
	// speaks only HTTP/1.1) make the next call wait for one of them, until its
	// context ends; every call the bot makes has a deadline (views.open's is the
	// trigger_id's 3 s).
	SlackConnsPerHost = 16
	// IdleConnTimeout is how long an unused connection is kept open.
	IdleConnTimeout = 90 * time.Second
	// DialTimeout bounds opening a TCP connection.
	DialTimeout = 10 * time.Second
	// TLSHandshakeTimeout bounds the TLS handshake of a new connection.
	TLSHandshakeTimeout = 10 * time.Second
	// ResponseHeaderTimeout bounds the wait for a response's headers once the request
	// is written (not the body, which may stream for minutes).
	ResponseHeaderTimeout = 30 * time.Second
	// HTTP2PingAfter is how long an HTTP/2 connection may stay silent before a ping
	// checks it; a connection that does not answer the ping within 15 s is closed, so
	// that its calls fail and retry instead of waiting out their timeouts.
	HTTP2PingAfter = 30 * time.Second
)

// NewTransport returns a new http.Transport with the settings above, HTTP/2 attempted
// (ForceAttemptHTTP2) and the proxy taken from HTTPS_PROXY, HTTP_PROXY and NO_PROXY
// (http.ProxyFromEnvironment). Each call returns a new Transport with its own pool of
// connections; callers may change its fields before first use.
func NewTransport() *http.Transport {
	d := &net.Dialer{Timeout: DialTimeout, KeepAlive: 30 * time.Second}
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		HTTP2:                 &http.HTTP2Config{SendPingTimeout: HTTP2PingAfter},
		MaxIdleConns:          MaxIdleConns,
		MaxIdleConnsPerHost:   MaxIdleConnsPerHost,
		IdleConnTimeout:       IdleConnTimeout,
		TLSHandshakeTimeout:   TLSHandshakeTimeout,
		ResponseHeaderTimeout: ResponseHeaderTimeout,
		ExpectContinueTimeout: time.Second,
	}
}

// NewModelTransport returns a NewTransport that keeps an idle connection for each of
// inFlight calls to one host (at least NewTransport's): over HTTP/1.1 each call in
// flight holds a connection, and a burst past the idle pool would dial connections
// that are closed again once idle. agents.NewClient's transport, with inFlight its
// MaxConcurrent.
func NewModelTransport(inFlight int) *http.Transport {
	tr := NewTransport()
	tr.MaxIdleConnsPerHost = max(tr.MaxIdleConnsPerHost, inFlight)
	tr.MaxIdleConns = max(tr.MaxIdleConns, inFlight)
	return tr
}

// New returns an http.Client on a NewTransport. Its Timeout is zero: bound each
// request with its context.
func New() *http.Client {
	return &http.Client{Transport: NewTransport()}
}
