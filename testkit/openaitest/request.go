package openaitest

import (
	"net/http"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Request is one request the server received, recorded before it is answered.
type Request struct {
	// N numbers the requests received by the server, from 1.
	N int
	// Time is when the request arrived.
	Time time.Time
	// Method and Path are the HTTP method and URL path ("/v1/chat/completions").
	Method string
	Path   string
	// Header is the request's HTTP header (Authorization carries the API key).
	Header http.Header
	// Body is the raw request body.
	Body []byte
	// Chat is Body decoded as a chat completion request (zero if it did not decode).
	Chat openai.ChatCompletionRequest
	// InFlight is the number of requests the server was answering when this one
	// arrived, this one included (see Server.InFlight).
	InFlight int

	done <-chan struct{}
}

// Done returns a channel that is closed once the request is over for the client: its
// context ended or its connection closed, or the server is closing. A handler that
// holds a request (until the test releases it) waits on Done too, so that it returns
// promptly when nobody waits for its answer any more. A Request that did not come from
// a Server (a zero Request) has a nil channel, which is never closed.
func (r Request) Done() <-chan struct{} { return r.done }

// LastUserMessage returns the content of the request's last message with role "user"
// ("" when there is none); the text parts of a multi-part message are joined.
func (r Request) LastUserMessage() string {
	for i := len(r.Chat.Messages) - 1; i >= 0; i-- {
		if m := r.Chat.Messages[i]; m.Role == openai.ChatMessageRoleUser {
			return messageText(m)
		}
	}
	return ""
}

// SystemPrompt returns the content of the request's first message when its role is
// "system" or "developer", and "" otherwise.
func (r Request) SystemPrompt() string {
	if len(r.Chat.Messages) == 0 {
		return ""
	}
	m := r.Chat.Messages[0]
	if m.Role != openai.ChatMessageRoleSystem && m.Role != openai.ChatMessageRoleDeveloper {
		return ""
	}
	return messageText(m)
}

// ToolResults returns the request's tool messages (role "tool"), oldest first.
func (r Request) ToolResults() []openai.ChatCompletionMessage {
	var out []openai.ChatCompletionMessage
	for _, m := range r.Chat.Messages {
		if m.Role == openai.ChatMessageRoleTool {
			out = append(out, m)
		}
	}
	return out
}

// ToolNames returns the names of the functions the request offers in "tools".
func (r Request) ToolNames() []string {
	var out []string
	for _, t := range r.Chat.Tools {
		if t.Function != nil {
			out = append(out, t.Function.Name)
		}
	}
	return out
}

func messageText(m openai.ChatCompletionMessage) string {
	if len(m.MultiContent) == 0 {
		return m.Content
	}
	var parts []string
	for _, p := range m.MultiContent {
		if p.Type == openai.ChatMessagePartTypeText {
			parts = append(parts, p.Text)
		}
	}
	return strings.Join(parts, "\n")
}
