// Package openaitest provides a scriptable fake of the OpenAI Chat Completions API for
// tests, in the spirit of net/http/httptest.
//
// A Server listens on 127.0.0.1 and serves POST /v1/chat/completions, streamed
// ("stream": true, server-sent events ending in "data: [DONE]") or not. Point any
// OpenAI-compatible client at Server.URL — go-openai's ClientConfig.BaseURL, or
// OPENAI_BASE_URL for the whole program — and script what the "model" answers:
//
//	srv := openaitest.NewServer()
//	defer srv.Close()
//	srv.Push(
//		openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: "current_time", Arguments: `{}`}}},
//		openaitest.Response{Text: "It is noon."},
//	)
//	// ... run the code under test against srv.URL() ...
//	reqs := srv.Requests() // what the client sent, parsed
//
// Responses are answered from a FIFO queue (Push) and, when the queue is empty, from a
// handler (Handle). A request that finds neither gets HTTP 500 with an OpenAI error body
// saying the script is empty, so a test that forgot to script a call fails loudly. A
// handler that holds a request until the test releases it also waits on the Request's
// Done, closed when the client gives up or the server closes.
//
// A Response can also be an HTTP error (Status, with Retry-After), a delay that honours
// the request's cancellation (Delay), a 200 without choices (Empty), or a recorded stream
// replayed byte for byte (RawSSE), such as the real OpenAI streams in
// shared/fixtures/openai.
//
// For tests of a client's concurrency and connection reuse, the server counts the
// requests it is answering (InFlight, MaxInFlight, and Request.InFlight at each
// arrival) and the TCP connections it has accepted (Connections).
//
// Streams are shaped like OpenAI's: a first chunk with the role, content in small
// pieces, each tool call as a chunk with its index, id and name followed by chunks of
// argument text, a chunk with finish_reason, and, when the request sets
// stream_options.include_usage, a final chunk with usage and no choices.
package openaitest
