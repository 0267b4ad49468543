package function

import (
	"encoding/json"
	"slices"

	openai "github.com/sashabaranov/go-openai"
)

// Schema is a JSON schema under construction: a function's parameters, or one of
// their properties.
type Schema = map[string]any

// Object returns the schema of an object whose properties are all required and that
// allows no others.
func Object(props Schema) Schema {
	required := make([]string, 0, len(props))
	for name := range props {
		required = append(required, name)
	}
	slices.Sort(required)
	return Schema{"type": "object", "properties": props, "required": required, "additionalProperties": false}
}

// Optional takes names off an object schema's required properties and returns s.
func Optional(s Schema, names ...string) Schema {
	s["required"] = slices.DeleteFunc(s["required"].([]string), func(n string) bool { return slices.Contains(names, n) })
	return s
}

// String returns the schema of a string property with its description.
func String(description string) Schema {
	return Schema{"type": "string", "description": description}
}

// Define returns the definition of the function name, which the model reads as
// tools[].function: its description and its parameters' schema. It panics when params
// cannot be encoded as JSON, which schemas of strings, numbers, slices and maps never
// are.
func Define(name, description string, params Schema) openai.FunctionDefinition {
	b, err := json.Marshal(params)
	if err != nil {
		panic(err)
	}
	return openai.FunctionDefinition{Name: name, Description: description, Parameters: json.RawMessage(b)}
}

// Forced returns a chat completion request of a system and a user message to model,
// with fn its only tool, which tool_choice forces ({"type": "function", "function":
// {"name": …}}).
func Forced(model, system, user string, fn openai.FunctionDefinition) openai.ChatCompletionRequest {
	return openai.ChatCompletionRequest{
		Model: model,
		Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: system},
			{Role: openai.ChatMessageRoleUser, Content: user},
		},
		Tools:      []openai.Tool{{Type: openai.ToolTypeFunction, Function: &fn}},
		ToolChoice: openai.ToolChoice{Type: openai.ToolTypeFunction, Function: openai.ToolFunction{Name: fn.Name}},
	}
}
