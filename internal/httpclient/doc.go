// Package httpclient makes the HTTP clients threadwright talks to its APIs with: the
// model endpoint (agents.Client) and the Slack Web API (slack.OptionHTTPClient).
//
// Go's http.DefaultTransport keeps only 2 idle connections per host, so under load most
// requests to one API open a new connection: a TCP and a TLS handshake each, on the
// internet. NewTransport keeps enough idle connections for 128 calls in
// flight to one host (MaxIdleConnsPerHost), tries HTTP/2 (which multiplexes calls over
// one connection), checks idle HTTP/2 connections with pings, and bounds the dial, the
// TLS handshake and the wait for response headers. It never bounds a whole response:
// a model's answer streams for as long as the caller's context allows. NewSlack's
// transport (NewSlackTransport) also bounds the connections to a host to those it keeps idle
// (SlackConnsPerHost), so that a burst of Web API calls waits for a warm connection
// instead of dialling connections that are closed again once idle.
package httpclient
