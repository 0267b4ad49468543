package demo

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// Reading a chat completion request (its messages' text, the tools offered,
// tool_choice and the JSON schemas of the functions) and writing the tool
// calls and arguments of the answer.

// messageText is a message's text: its content, or the text parts of a multi-part
// content.
func messageText(m openai.ChatCompletionMessage) string {
	if m.Content != "" || len(m.MultiContent) == 0 {
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

func lastUserText(msgs []openai.ChatCompletionMessage) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == openai.ChatMessageRoleUser {
			return strings.TrimSpace(messageText(msgs[i]))
		}
	}
	return ""
}

// forcedTool returns the function name a tool_choice object forces, or "".
func forcedTool(choice any) string {
	switch c := choice.(type) {
	case nil, string:
		return ""
	case openai.ToolChoice:
		return c.Function.Name
	case *openai.ToolChoice:
		if c == nil {
			return ""
		}
		return c.Function.Name
	}
	b, err := json.Marshal(choice)
	if err != nil {
		return ""
	}
	var v struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(b, &v) != nil {
		return ""
	}
	return v.Function.Name
}

// choiceString returns a tool_choice string ("auto", "none", "required"), or "".
func choiceString(choice any) string {
	s, _ := choice.(string)
	return s
}

func findTool(tools []openai.Tool, name string) *openai.FunctionDefinition {
	for _, t := range tools {
		if t.Function != nil && t.Function.Name == name {
			return t.Function
		}
	}
	return nil
}

func toolCall(step, i int, name, args string) openai.ToolCall {
	return openai.ToolCall{
		ID:       fmt.Sprintf("call_demo_%d_%d", step, i),
		Type:     openai.ToolTypeFunction,
		Function: openai.FunctionCall{Name: name, Arguments: args},
	}
}

// marshal encodes v as JSON without HTML escaping (the arguments stay readable in
// logs).
func marshal(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // only strings, booleans, slices and maps
	}
	return strings.TrimSpace(b.String())
}

// schemaOf decodes a function's parameters schema.
func schemaOf(fn *openai.FunctionDefinition) map[string]any {
	if fn == nil || fn.Parameters == nil {
		return nil
	}
	var b []byte
	switch p := fn.Parameters.(type) {
	case json.RawMessage:
		b = p
	case []byte:
		b = p
	case string:
		b = []byte(p)
	default:
		var err error
		if b, err = json.Marshal(p); err != nil {
			return nil
		}
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m
}

// prop returns the schema of property name of an object schema s ("" returns s).
func prop(s map[string]any, name string) map[string]any {
	if name == "" {
		return s
	}
	props, _ := s["properties"].(map[string]any)
	p, _ := props[name].(map[string]any)
	return p
}

func itemsOf(s map[string]any) map[string]any {
	it, _ := s["items"].(map[string]any)
	return it
}

// enumOf returns the non-empty string values of a schema's enum.
func enumOf(s map[string]any) []string {
	vals, _ := s["enum"].([]any)
	var out []string
	for _, v := range vals {
		if str, ok := v.(string); ok && str != "" {
			out = append(out, str)
		}
	}
	return out
}

func intOf(v any, def int) int {
	if f, ok := v.(float64); ok && f > 0 {
		return int(f)
	}
	return def
}

// exampleValue returns a value valid for schema s: the first enum value, true, the
// minimum, minItems elements, every property of an object.
func exampleValue(s map[string]any, name string) any {
	if vals, ok := s["enum"].([]any); ok && len(vals) > 0 {
		for _, v := range vals {
			if str, ok := v.(string); !ok || str != "" {
				return v
			}
		}
		return vals[0]
	}
	typ, _ := s["type"].(string)
	if types, ok := s["type"].([]any); ok && len(types) > 0 {
		typ, _ = types[0].(string)
	}
	switch typ {
	case "boolean":
		return true
	case "integer", "number":
		if f, ok := s["minimum"].(float64); ok {
			return f
		}
		return 1
	case "array":
		n := intOf(s["minItems"], 1)
		out := make([]any, n)
		for i := range out {
			out[i] = exampleValue(itemsOf(s), fmt.Sprintf("%s %d", name, i+1))
		}
		return out
	case "object", "":
		props, _ := s["properties"].(map[string]any)
		if typ == "" && props == nil {
			return "Offline demo value for " + name + "."
		}
		keys := make([]string, 0, len(props))
		for k := range props {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := map[string]any{}
		for _, k := range keys {
			p, _ := props[k].(map[string]any)
			out[k] = exampleValue(p, k)
		}
		return out
	}
	return "Offline demo value for " + name + "."
}
