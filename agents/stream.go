package agents

import (
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/conversation"
)

// assembler reassembles a streamed chat completion (choice 0) from its chunks.
// Content arrives in pieces; each tool call arrives as a delta naming its index, id,
// type and function name, then deltas with pieces of its arguments. Deltas of
// parallel tool calls may interleave; they are told apart by index.
type assembler struct {
	content strings.Builder
	refusal strings.Builder
	calls   []openai.ToolCall
	finish  openai.FinishReason
	usage   *openai.Usage
	model   string
}

func (a *assembler) add(chunk *openai.ChatCompletionStreamResponse) {
	if chunk.Model != "" {
		a.model = chunk.Model
	}
	if chunk.Usage != nil {
		a.usage = chunk.Usage
	}
	for i := range chunk.Choices {
		ch := &chunk.Choices[i]
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
