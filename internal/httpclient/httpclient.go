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
	// calls beyond this many opens connections that are closed once idle. Keeping
	// 1,024 instead saved about 3 % of the CPU of BenchmarkBurst's 1,000 threads for
	// 12 MiB more (three runs each, 2026-12-02), so it stays at 128.
	MaxIdleConnsPerHost = 128
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

// New returns an http.Client on a NewTransport. Its Timeout is zero: bound each
// request with its context.
func New() *http.Client {
	return &http.Client{Transport: NewTransport()}
}
