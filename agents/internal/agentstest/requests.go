package agentstest

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/testkit/openaitest"
)

// Commit is a scripted response that calls function name with args (a JSON string,
// or a value to marshal).
func Commit(name string, args any) openaitest.Response {
	s, ok := args.(string)
	if !ok {
		b, err := json.Marshal(args)
		if err != nil {
			panic(err)
		}
		s = string(b)
	}
	return openaitest.Response{
		ToolCalls: []openaitest.ToolCall{{Name: name, Arguments: s}},
		Usage:     openaitest.Usage{PromptTokens: 100, CompletionTokens: 20},
	}
}

// Text is a scripted response of text s.
func Text(s string) openaitest.Response {
	return openaitest.Response{Text: s, Usage: openaitest.Usage{PromptTokens: 90, CompletionTokens: 10}}
}

// ToolChoice returns the function a request's tool_choice forces; the test fails
// when it forces none.
func ToolChoice(tb testing.TB, r openaitest.Request) string {
	tb.Helper()
	var body struct {
		ToolChoice json.RawMessage `json:"tool_choice"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		tb.Fatal(err)
	}
	var choice struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(body.ToolChoice, &choice); err != nil || choice.Type != "function" {
		tb.Fatalf("tool_choice = %s, want a function", body.ToolChoice)
	}
	return choice.Function.Name
}

// CheckRequest checks what every forced request has: the model, the one commit
// function offered and forced, no response format.
func CheckRequest(tb testing.TB, r openaitest.Request, model, tool string) {
	tb.Helper()
	if r.Chat.Model != model {
		tb.Errorf("model = %q, want %q", r.Chat.Model, model)
	}
	if got := r.ToolNames(); !reflect.DeepEqual(got, []string{tool}) {
		tb.Errorf("tools = %v, want [%s]", got, tool)
	}
	if got := ToolChoice(tb, r); got != tool {
		tb.Errorf("tool_choice forces %q, want %q", got, tool)
	}
	if r.Chat.ResponseFormat != nil {
		tb.Errorf("response_format = %+v, want none", r.Chat.ResponseFormat)
	}
}

// Contains fails the test for each of wants that s, which is what, lacks.
func Contains(tb testing.TB, what, s string, wants ...string) {
	tb.Helper()
	for _, w := range wants {
		if !strings.Contains(s, w) {
			tb.Errorf("%s lacks %q:\n%s", what, w, s)
		}
	}
}

// Lacks fails the test for each of unwanted that s, which is what, contains.
func Lacks(tb testing.TB, what, s string, unwanted ...string) {
	tb.Helper()
	for _, w := range unwanted {
		if strings.Contains(s, w) {
			tb.Errorf("%s contains %q:\n%s", what, w, s)
		}
	}
}
