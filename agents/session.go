package agents

import (
	"fmt"
	"strings"

	"github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/conversation"
)

// collectEntities adds the tool-result contract of calls (ToolCall.Entities and
// OutOfScope, read when each ran) to f.
func collectEntities(f *conversation.Findings, calls []conversation.ToolCall) {
	for _, c := range calls {
		if c.Failed || c.Denied {
			continue
		}
		f.Entities = append(f.Entities, c.Entities...)
		f.OutOfScope = append(f.OutOfScope, c.OutOfScope...)
	}
}

// sessionMessage tells the model which items were recently discussed, so that "the
// first one" or "that ticket" resolve; nil when there are none.
func sessionMessage(entities []conversation.Entity) *openai.ChatCompletionMessage {
	if len(entities) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("Items recently discussed in this thread, the latest results first, in the order they were listed. When the person refers to one indirectly (\"the first one\", \"that ticket\"), it means one of these:\n")
	for i, e := range entities {
		fmt.Fprintf(&b, "%d. %s", i+1, e.ID)
		if e.Title != "" {
			fmt.Fprintf(&b, " — %s", e.Title)
		}
		if e.Type != "" {
			fmt.Fprintf(&b, " (%s)", e.Type)
		}
		b.WriteString("\n")
	}
	return &openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: strings.TrimSpace(b.String())}
}

// holdAnswer reports whether the answer of a turn with findings f so far must not be
// streamed: a tool marked items out of scope, so the reply will be a rejection, or
// (HoldUnscoped) a result without a scope label will be classified first.
func (e *Executor) holdAnswer(f conversation.Findings) bool {
	if len(f.OutOfScope) > 0 {
		return true
	}
	if e.hold {
		for _, c := range f.ToolCalls {
			if !c.Failed && !c.Denied && !c.Scoped {
				return true
			}
		}
	}
	return false
}
