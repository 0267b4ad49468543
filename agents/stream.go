package agents

import (
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/conversation"
)

// Completion is a chat completion reassembled from its stream: one choice.
type Completion struct {
	// Content is the assistant message's text (choices[0].message.content); when the
	// model refused (choices[0].message.refusal) and wrote no content, the refusal.
	Content string
	// ToolCalls are the function calls the model asked for, in the order of their
	// index in the stream, each with its id, type "function", name and complete JSON
	// arguments (as the model wrote them: not validated).
	ToolCalls []openai.ToolCall
	// FinishReason is choices[0].finish_reason: "stop", "tool_calls", "length",
	// "content_filter", or "" when the stream ended without one.
	FinishReason openai.FinishReason
	// Truncated is true when FinishReason is "length": the answer was cut off by the
	// token limit and Content (or the last tool call's arguments) is partial.
	Truncated bool
	// Usage is the call's token usage (the stream's usage chunk, requested with
	// stream_options.include_usage); zero when the server sent none. Failed attempts
	// that were retried are not counted: the API reports no usage for them.
	Usage conversation.Usage
	// Model is the model that answered, as the server reports it.
	Model string
	// Attempts is the number of HTTP attempts the call took (1 without retries).
	Attempts int
}

// Message returns the completion as the assistant message to append to the
// conversation for the next call: role "assistant", content and tool calls.
func (c Completion) Message() openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: c.Content, ToolCalls: c.ToolCalls}
}

// chunk is what a Client reads of a streamed chat completion's event: go-openai's
// ChatCompletionStreamResponse without the fields it does not use, which are not
// decoded (an event is read with go-openai's RecvRaw).
type chunk struct {
	Model   string        `json:"model"`
	Choices []chunkChoice `json:"choices"`
	Usage   *chunkUsage   `json:"usage"`
}

type chunkChoice struct {
	Index int `json:"index"`
	Delta struct {
		Content   string            `json:"content"`
		Refusal   string            `json:"refusal"`
		ToolCalls []openai.ToolCall `json:"tool_calls"`
	} `json:"delta"`
	FinishReason openai.FinishReason `json:"finish_reason"`
}

type chunkUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// assembler reassembles a streamed chat completion (choice 0) from its chunks.
// Content arrives in pieces; each tool call arrives as a delta naming its index, id,
// type and function name, then deltas with pieces of its arguments. Deltas of
// parallel tool calls may interleave; they are told apart by index.
type assembler struct {
	content strings.Builder
	refusal strings.Builder
	calls   []openai.ToolCall
	finish  openai.FinishReason
	usage   *chunkUsage
	model   string
}

func (a *assembler) add(c *chunk) {
	if c.Model != "" {
		a.model = c.Model
	}
	if c.Usage != nil {
		a.usage = c.Usage
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 {
			continue // we ask for one choice (n unset)
		}
		a.content.WriteString(ch.Delta.Content)
		a.refusal.WriteString(ch.Delta.Refusal)
		for _, d := range ch.Delta.ToolCalls {
			a.addToolCall(d)
		}
		if ch.FinishReason != "" && ch.FinishReason != openai.FinishReasonNull {
			a.finish = ch.FinishReason
		}
	}
}

func (a *assembler) addToolCall(d openai.ToolCall) {
	var i int
	switch {
	case d.Index != nil:
		i = *d.Index
	case d.ID != "" || len(a.calls) == 0:
		// Some OpenAI-compatible servers omit index: a delta with an id starts a
		// new call, one without continues the last.
		i = len(a.calls)
	default:
		i = len(a.calls) - 1
	}
	if i < 0 || i > 1024 {
		return // nonsense index; never allocate for it
	}
	for len(a.calls) <= i {
		a.calls = append(a.calls, openai.ToolCall{})
	}
	tc := &a.calls[i]
	if d.ID != "" {
		tc.ID = d.ID
	}
	if d.Type != "" {
		tc.Type = d.Type
	}
	// OpenAI sends the name once; a server that repeats it in every delta must not
	// make "fnfn" of it.
	if n := d.Function.Name; n != "" && n != tc.Function.Name {
		tc.Function.Name += n
	}
	tc.Function.Arguments += d.Function.Arguments
}

func (a *assembler) completion() Completion {
	c := Completion{
		Content:      a.content.String(),
		FinishReason: a.finish,
		Truncated:    a.finish == openai.FinishReasonLength,
		Model:        a.model,
	}
	if c.Content == "" {
		c.Content = a.refusal.String()
	}
	if a.usage != nil {
		c.Usage = conversation.Usage{PromptTokens: a.usage.PromptTokens, CompletionTokens: a.usage.CompletionTokens}
	}
	for i, tc := range a.calls {
		if tc.ID == "" && tc.Function.Name == "" && tc.Function.Arguments == "" {
			continue // a gap in the indices
		}
		if tc.ID == "" {
			tc.ID = fmt.Sprintf("call_%d", i)
		}
		if tc.Type == "" {
			tc.Type = openai.ToolTypeFunction
		}
		tc.Index = nil
		c.ToolCalls = append(c.ToolCalls, tc)
	}
	return c
}
