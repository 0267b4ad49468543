package agents

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/conversation"
)

// toolEntities reads the session-context fields of a tool's result: a JSON object's
// "entities" (items it returned) and "out_of_scope" (items outside the deployment's
// domain, each with a "reason"), as documented on conversation.Entity. A result that
// is not a JSON object, or has neither field, yields nothing.
func toolEntities(result string) (found, outOfScope []conversation.Entity) {
	result = strings.TrimSpace(result)
	if !strings.HasPrefix(result, "{") {
		return nil, nil
	}
	var r struct {
		Entities   []conversation.Entity `json:"entities"`
		OutOfScope []conversation.Entity `json:"out_of_scope"`
	}
	if json.Unmarshal([]byte(result), &r) != nil {
		return nil, nil
	}
	keep := func(es []conversation.Entity) []conversation.Entity {
		out := es[:0]
		for _, e := range es {
			if e.ID = strings.TrimSpace(e.ID); e.ID != "" {
				out = append(out, e)
			}
		}
		return out
	}
	return keep(r.Entities), keep(r.OutOfScope)
}

// collectEntities adds the session-context fields of the results of calls to f.
func collectEntities(f *conversation.Findings, calls []conversation.ToolCall) {
	for _, c := range calls {
		if c.Failed {
			continue
		}
		found, out := toolEntities(c.Result)
		f.Entities = append(f.Entities, found...)
		f.OutOfScope = append(f.OutOfScope, out...)
	}
}

// sessionMessage tells the model which items were recently discussed, so that "the
// first one" or "that ticket" resolve; nil when there are none.
func sessionMessage(entities []conversation.Entity) *openai.ChatCompletionMessage {
	if len(entities) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("Items recently discussed in this thread, most recent first. When the person refers to one indirectly (\"the first one\", \"that ticket\"), it means one of these:\n")
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
