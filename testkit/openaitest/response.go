package openaitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"
)

// Response scripts one answer of the server. The zero Response is a successful answer
// with empty content and finish_reason "stop".
type Response struct {
	// Text is the assistant message's content. Streamed, it is sent in word-sized
	// pieces.
	Text string
	// ToolCalls are the tool calls the "model" asks for, in order (their index in the
	// stream). Streamed, each is sent as a chunk with index, id, type and name, then
	// its arguments in pieces of a few bytes.
	ToolCalls []ToolCall
	// FinishReason is the choice's finish_reason; default "tool_calls" when ToolCalls
	// is set and "stop" otherwise. Use "length" to simulate a cut-off answer.
	FinishReason string
	// Usage is reported in the response's usage (streamed: in a final usage-only chunk
	// when the request sets stream_options.include_usage). When it is zero the server
	// reports an estimate of one token per four bytes of request body and of output.
	Usage Usage
	// Delay is how long to wait before answering. The wait ends early, without an
	// answer, when the client cancels the request or the server closes.
	Delay time.Duration
	// Status, when set to anything but 200, answers with that HTTP status and an
	// OpenAI error body {"error": {"message", "type", "param", "code"}}: for example 429,
	// 500, 503 or 400.
	Status int
	// ErrorMessage is the error body's message for Status; a default names the status.
	ErrorMessage string
	// RetryAfter, with Status, sets the Retry-After header (whole seconds, rounded up)
	// and OpenAI's retry-after-ms header (milliseconds).
	RetryAfter time.Duration
	// RawSSE, when not nil, is written verbatim as the response body with Content-Type
	// text/event-stream, whatever the request asked: a recorded stream such as the
	// files in shared/fixtures/openai.
	RawSSE []byte
	// Empty answers with HTTP 200 and no choices at all ("choices": []); streamed, no
	// chunk has a choice. (For a choice with empty content, leave Text and ToolCalls
	// empty instead.)
	Empty bool
}

// ToolCall is a function call in a scripted Response.
type ToolCall struct {
	// ID is the tool call's id; default "call_<request>_<index>".
	ID string
	// Name is the function's name.
	Name string
	// Arguments is the JSON text of the arguments, sent as is (so it may be invalid
	// JSON on purpose); default "{}".
	Arguments string
}

// Usage is token usage, OpenAI's usage.prompt_tokens and usage.completion_tokens.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
}

func (r *Response) finishReason() string {
	switch {
	case r.FinishReason != "":
		return r.FinishReason
	case len(r.ToolCalls) > 0:
		return "tool_calls"
	default:
		return "stop"
	}
}

func (r *Response) errorMessage() string {
	if r.ErrorMessage != "" {
		return r.ErrorMessage
	}
	switch {
	case r.Status == http.StatusTooManyRequests:
		return "openaitest: Rate limit reached for requests. Please try again later."
	case r.Status >= 500:
		return "openaitest: The server had an error while processing your request."
	default:
		return fmt.Sprintf("openaitest: %d %s", r.Status, http.StatusText(r.Status))
	}
}

func (r *Response) usage(req *Request) wireUsage {
	u := r.Usage
	if u == (Usage{}) {
		out := len(r.Text)
		for _, tc := range r.ToolCalls {
			out += len(tc.Name) + len(tc.Arguments)
		}
		u = Usage{PromptTokens: tokens(len(req.Body)), CompletionTokens: tokens(out)}
	}
	return wireUsage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.PromptTokens + u.CompletionTokens}
}

func tokens(n int) int { return max(1, (n+3)/4) }

func (r *Response) toolCalls(req *Request) []wireToolCall {
	out := make([]wireToolCall, len(r.ToolCalls))
	for i, tc := range r.ToolCalls {
		id := tc.ID
		if id == "" {
			id = fmt.Sprintf("call_%d_%d", req.N, i)
		}
		args := tc.Arguments
		if args == "" {
			args = "{}"
		}
		idx := i
		out[i] = wireToolCall{Index: &idx, ID: id, Type: "function", Function: wireFunction{Name: tc.Name, Arguments: args}}
	}
	return out
}

// The JSON shapes of the Chat Completions API
// (https://platform.openai.com/docs/api-reference/chat/object and /streaming).
type (
	wireCompletion struct {
		ID      string       `json:"id"`
		Object  string       `json:"object"`
		Created int64        `json:"created"`
		Model   string       `json:"model"`
		Choices []wireChoice `json:"choices"`
		Usage   *wireUsage   `json:"usage,omitempty"`
	}
	wireChoice struct {
		Index        int          `json:"index"`
		Message      *wireMessage `json:"message,omitempty"`
		Delta        *wireMessage `json:"delta,omitempty"`
		Logprobs     *struct{}    `json:"logprobs"`
		FinishReason *string      `json:"finish_reason"`
	}
	wireMessage struct {
		Role      string         `json:"role,omitempty"`
		Content   *string        `json:"content,omitempty"`
		ToolCalls []wireToolCall `json:"tool_calls,omitempty"`
	}
	wireToolCall struct {
		Index    *int         `json:"index,omitempty"`
		ID       string       `json:"id,omitempty"`
		Type     string       `json:"type,omitempty"`
		Function wireFunction `json:"function"`
	}
	wireFunction struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	}
	wireUsage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	}
	wireError struct {
		Error struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Param   *string `json:"param"`
			Code    *string `json:"code"`
		} `json:"error"`
	}
)

func completionBody(req *Request, r *Response) wireCompletion {
	c := wireCompletion{
		ID:      fmt.Sprintf("chatcmpl-openaitest-%d", req.N),
		Object:  "chat.completion",
		Created: req.Time.Unix(),
		Model:   req.Chat.Model,
		Choices: []wireChoice{},
	}
	u := r.usage(req)
	c.Usage = &u
	if r.Empty {
		return c
	}
	msg := &wireMessage{Role: "assistant", ToolCalls: r.toolCalls(req)}
	for i := range msg.ToolCalls {
		msg.ToolCalls[i].Index = nil
	}
	if r.Text != "" || len(r.ToolCalls) == 0 {
		msg.Content = &r.Text
	}
	fr := r.finishReason()
	c.Choices = append(c.Choices, wireChoice{Message: msg, FinishReason: &fr})
	return c
}

func writeStream(w http.ResponseWriter, req *Request, r *Response) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	base := wireCompletion{
		ID:      fmt.Sprintf("chatcmpl-openaitest-%d", req.N),
		Object:  "chat.completion.chunk",
		Created: req.Time.Unix(),
		Model:   req.Chat.Model,
	}
	send := func(choices []wireChoice, u *wireUsage) bool {
		c := base
		c.Choices = choices
		if c.Choices == nil {
			c.Choices = []wireChoice{}
		}
		c.Usage = u
		b, err := json.Marshal(c)
		if err != nil {
			panic(err) // the wire types always marshal
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	delta := func(m wireMessage) []wireChoice { return []wireChoice{{Delta: &m}} }

	if !r.Empty {
		empty := ""
		first := wireMessage{Role: "assistant", Content: &empty}
		if !send(delta(first), nil) {
			return
		}
		for _, piece := range splitWords(r.Text) {
			if !send(delta(wireMessage{Content: &piece}), nil) {
				return
			}
		}
		for _, tc := range r.toolCalls(req) {
			args := tc.Function.Arguments
			tc.Function.Arguments = ""
			if !send(delta(wireMessage{ToolCalls: []wireToolCall{tc}}), nil) {
				return
			}
			for _, piece := range splitBytes(args, 8) {
				part := wireToolCall{Index: tc.Index, Function: wireFunction{Arguments: piece}}
				if !send(delta(wireMessage{ToolCalls: []wireToolCall{part}}), nil) {
					return
				}
			}
		}
		fr := r.finishReason()
		if !send([]wireChoice{{Delta: &wireMessage{}, FinishReason: &fr}}, nil) {
			return
		}
	}
	if so := req.Chat.StreamOptions; so != nil && so.IncludeUsage {
		u := r.usage(req)
		if !send(nil, &u) {
			return
		}
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

// writeRaw writes a recorded event stream, flushing after each event.
func writeRaw(w http.ResponseWriter, raw []byte) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	for len(raw) > 0 {
		event := raw
		if i := bytes.Index(raw, []byte("\n\n")); i >= 0 {
			event = raw[:i+2]
		}
		raw = raw[len(event):]
		if _, err := w.Write(event); err != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, typ, msg string, retryAfter time.Duration) {
	var e wireError
	e.Error.Message = msg
	e.Error.Type = typ
	if status == http.StatusTooManyRequests {
		code := "rate_limit_exceeded"
		e.Error.Code = &code
	}
	if retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(retryAfter.Seconds()))))
		w.Header().Set("Retry-After-Ms", strconv.FormatInt(retryAfter.Milliseconds(), 10))
	}
	writeJSON(w, status, e)
}

func errorType(status int) string {
	switch {
	case status == http.StatusTooManyRequests:
		return "requests"
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status >= 500:
		return "server_error"
	default:
		return "invalid_request_error"
	}
}

// splitWords cuts s into pieces that each start with the white space before a word,
// the way models stream text (" world", ",").
func splitWords(s string) []string {
	var out []string
	start := 0
	prevSpace := true
	for i, r := range s {
		space := unicode.IsSpace(r)
		if space && !prevSpace && i > start {
			out = append(out, s[start:i])
			start = i
		}
		prevSpace = space
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// splitBytes cuts s into pieces of about n bytes, never inside a UTF-8 sequence.
func splitBytes(s string, n int) []string {
	var out []string
	for len(s) > n {
		i := n
		for i < len(s) && !utf8.RuneStart(s[i]) {
			i++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}
