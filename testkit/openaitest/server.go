package openaitest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Server is a fake OpenAI-compatible API server. Create it with NewServer and stop it
// with Close. Its methods are safe for concurrent use.
type Server struct {
	srv    *httptest.Server
	closed chan struct{}
	once   sync.Once

	mu          sync.Mutex
	queue       []Response
	handler     func(Request) Response
	requests    []Request
	arrived     chan struct{} // closed and replaced when a request is recorded
	inFlight    int
	maxInFlight int
	conns       int
}

// NewServer starts a Server on 127.0.0.1 with a random port. Stop it with Close.
func NewServer() *Server {
	s := &Server{closed: make(chan struct{}), arrived: make(chan struct{})}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serveHTTP))
	s.srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.mu.Lock()
			s.conns++
			s.mu.Unlock()
		}
	}
	s.srv.Start()
	return s
}

// URL returns the base URL of the API, "http://127.0.0.1:PORT/v1": the value for
// go-openai's ClientConfig.BaseURL or the OPENAI_BASE_URL environment variable.
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// ClientConfig returns a go-openai configuration for the server, with API key "test".
func (s *Server) ClientConfig() openai.ClientConfig {
	cfg := openai.DefaultConfig("test")
	cfg.BaseURL = s.URL()
	return cfg
}

// Close aborts pending Delays, closes client connections and shuts the server down,
// waiting for requests in flight to finish. It is safe to call more than once.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.closed)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
}

// Push appends responses to the script. Each request takes the oldest queued
// response; when the queue is empty the handler set with Handle answers. A request the
// real API would reject (no model, no messages, tool_choice without tools, a tool
// message that answers no tool call, a tool call left unanswered) gets HTTP 400
// invalid_request_error and takes nothing from the script.
func (s *Server) Push(rs ...Response) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, rs...)
}

// Handle sets the function that answers requests when the queue is empty (nil
// removes it). It may be called concurrently, from several requests at once, and may
// call the Server's methods. A handler that waits (for the test to release the
// request, say) should also return once the Request's Done is closed.
func (s *Server) Handle(h func(r Request) Response) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handler = h
}

// Pending returns the number of queued responses not yet used.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Requests returns a copy of every request received so far, oldest first, including
// requests answered with an error.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	copy(out, s.requests)
	return out
}

// WaitRequests blocks until the server has received at least n requests (answered or
// not), and returns them as Requests does. Errors: ctx's, when it ends first.
func (s *Server) WaitRequests(ctx context.Context, n int) ([]Request, error) {
	for {
		s.mu.Lock()
		got, arrived := len(s.requests), s.arrived
		s.mu.Unlock()
		if got >= n {
			return s.Requests(), nil
		}
		select {
		case <-arrived:
		case <-ctx.Done():
			return nil, fmt.Errorf("openaitest: %d of %d requests received: %w", got, n, ctx.Err())
		}
	}
}

// LastRequest returns the newest request received; ok is false when there is none.
func (s *Server) LastRequest() (r Request, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.requests) == 0 {
		return Request{}, false
	}
	return s.requests[len(s.requests)-1], true
}

// InFlight returns the number of requests being answered now. A request counts from
// the moment its headers are read until the server's handler returns, which is before
// the end of its response is sent (the terminating chunk of a stream, the whole of a
// small JSON answer): a client that has read a response to its end knows that its
// request no longer counts.
func (s *Server) InFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inFlight
}

// MaxInFlight returns the highest InFlight so far.
func (s *Server) MaxInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxInFlight
}

// Connections returns the number of TCP connections the server has accepted so far:
// a client that reuses its connections opens few.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns
}

// enter counts a request in flight and returns InFlight with it.
func (s *Server) enter() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inFlight++
	s.maxInFlight = max(s.maxInFlight, s.inFlight)
	return s.inFlight
}

func (s *Server) leave() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inFlight--
}

// record stores r and, when answer is set, picks the response that answers it.
func (s *Server) record(r *Request, answer bool) (Response, bool) {
	s.mu.Lock()
	r.N = len(s.requests) + 1
	s.requests = append(s.requests, *r)
	close(s.arrived)
	s.arrived = make(chan struct{})
	if !answer {
		s.mu.Unlock()
		return Response{}, false
	}
	if len(s.queue) > 0 {
		resp := s.queue[0]
		s.queue[0] = Response{}
		s.queue = s.queue[1:]
		s.mu.Unlock()
		return resp, true
	}
	h := s.handler
	s.mu.Unlock()
	if h == nil {
		return Response{}, false
	}
	return h(*r), true
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	inFlight := s.enter()
	defer s.leave()
	const path = "/v1/chat/completions"
	if r.URL.Path != path {
		writeError(w, http.StatusNotFound, "invalid_request_error", fmt.Sprintf("openaitest: unknown path %s (only POST %s is served)", r.URL.Path, path), 0)
		return
	}
	if r.Method != http.MethodPost {
		writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "openaitest: use POST", 0)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return // the client went away
	}
	// ctx ends with the request, or when the server closes.
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() {
		select {
		case <-s.closed:
			cancel()
		case <-ctx.Done():
		}
	}()
	req := Request{Time: time.Now(), Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, InFlight: inFlight, done: ctx.Done()}
	var invalid string
	if err := json.Unmarshal(body, &req.Chat); err != nil {
		invalid = "openaitest: request body is not a chat completion request: " + err.Error()
	} else {
		invalid = validate(&req.Chat)
	}
	resp, ok := s.record(&req, invalid == "")
	if invalid != "" {
		writeError(w, http.StatusBadRequest, "invalid_request_error", invalid, 0)
		return
	}
	if ctx.Err() != nil {
		return // nobody waits for an answer: the client is gone, or the server is closing
	}
	if !ok {
		writeError(w, http.StatusInternalServerError, "server_error",
			fmt.Sprintf("openaitest: the script is empty: request %d found no pushed Response and no handler (use Server.Push or Server.Handle)", req.N), 0)
		return
	}

	if resp.Delay > 0 {
		t := time.NewTimer(resp.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
	switch {
	case resp.Status != 0 && resp.Status != http.StatusOK:
		writeError(w, resp.Status, errorType(resp.Status), resp.errorMessage(), resp.RetryAfter)
	case resp.RawSSE != nil:
		writeRaw(w, resp.RawSSE)
	case req.Chat.Stream:
		writeStream(w, &req, &resp)
	default:
		writeJSON(w, http.StatusOK, completionBody(&req, &resp))
	}
}

// validate rejects what the real API rejects with 400 invalid_request_error, so that a
// client bug shows in tests. It returns the error message, or "" when r is valid.
func validate(r *openai.ChatCompletionRequest) string {
	switch {
	case r.Model == "":
		return "openaitest: you must provide a model parameter"
	case len(r.Messages) == 0:
		return "openaitest: messages must not be empty"
	case r.ToolChoice != nil && len(r.Tools) == 0:
		return "openaitest: 'tool_choice' is only allowed when 'tools' are specified"
	case r.StreamOptions != nil && !r.Stream:
		return "openaitest: 'stream_options' is only allowed when 'stream' is true"
	}
	// Every tool message must answer a tool call of the assistant message before it,
	// and every tool call must be answered before the next other message.
	open := map[string]bool{}
	for i, m := range r.Messages {
		switch m.Role {
		case openai.ChatMessageRoleTool:
			if !open[m.ToolCallID] {
				return fmt.Sprintf("openaitest: messages[%d]: a message with role 'tool' must answer a tool call of the preceding assistant message (tool_call_id %q)", i, m.ToolCallID)
			}
			delete(open, m.ToolCallID)
		default:
			if len(open) > 0 {
				return fmt.Sprintf("openaitest: messages[%d]: the tool calls of the preceding assistant message were not all answered by tool messages", i)
			}
			for _, tc := range m.ToolCalls {
				if tc.ID == "" {
					return fmt.Sprintf("openaitest: messages[%d]: a tool call has no id", i)
				}
				open[tc.ID] = true
			}
		}
	}
	if len(open) > 0 {
		return "openaitest: the last assistant message's tool calls were not answered by tool messages"
	}
	return ""
}
