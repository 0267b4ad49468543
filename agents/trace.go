package agents

import (
	"context"
	"encoding/json"
	"strings"

	openai "github.com/sashabaranov/go-openai"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/threadwright/threadwright/internal/tracing"
)

// Spans of model and tool calls, after the OpenTelemetry GenAI semantic conventions
// (docs/operations.md, "Traces"): the attributes are semconv's gen_ai.* keys.

// genAISystemKey is gen_ai.system, which gen_ai.provider.name replaced; it is still
// set for trace backends that read only the older name.
const genAISystemKey = attribute.Key("gen_ai.system")

// modelAttemptsKey counts the HTTP attempts of a chat completion (retries included).
const modelAttemptsKey = attribute.Key("threadwright.model.attempts")

// toolOutcomeKey is a tool call's outcome: "ok", "error" or "timeout".
const toolOutcomeKey = attribute.Key("threadwright.tool.outcome")

// startChat starts the span of one chat completion: "chat {model}", kind client,
// gen_ai.operation.name chat, gen_ai.provider.name (and gen_ai.system) openai,
// gen_ai.request.model and the request's sampling settings; the messages
// (gen_ai.system_instructions, gen_ai.input.messages) only when tracing.Content allows.
func startChat(ctx context.Context, req openai.ChatCompletionRequest) (context.Context, trace.Span) {
	ctx, span := tracing.Start(ctx, "chat "+req.Model, trace.WithSpanKind(trace.SpanKindClient))
	if !span.IsRecording() {
		return ctx, span
	}
	span.SetAttributes(semconv.GenAIOperationNameChat, semconv.GenAIProviderNameOpenAI, genAISystemKey.String("openai"),
		semconv.GenAIRequestModel(req.Model))
	if n := req.MaxCompletionTokens; n > 0 {
		span.SetAttributes(semconv.GenAIRequestMaxTokens(n))
	}
	if req.Temperature != 0 {
		span.SetAttributes(semconv.GenAIRequestTemperature(float64(req.Temperature)))
	}
	if redact, ok := tracing.Content(); ok {
		system, input := chatInput(req.Messages)
		if len(system) > 0 {
			span.SetAttributes(semconv.GenAISystemInstructionsKey.String(redact(spanJSON(system))))
		}
		span.SetAttributes(semconv.GenAIInputMessagesKey.String(redact(spanJSON(input))))
	}
	return ctx, span
}

// endChat ends a chat completion's span with what the call returned:
// gen_ai.response.model, gen_ai.usage.input_tokens and output_tokens,
// gen_ai.response.finish_reasons, the attempts made, and the completion
// (gen_ai.output.messages) when tracing.Content allows.
func endChat(span trace.Span, comp Completion, err error) {
	if !span.IsRecording() {
		span.End()
		return
	}
	if comp.Model != "" {
		span.SetAttributes(semconv.GenAIResponseModel(comp.Model))
	}
	span.SetAttributes(
		semconv.GenAIUsageInputTokens(comp.Usage.PromptTokens),
		semconv.GenAIUsageOutputTokens(comp.Usage.CompletionTokens),
		modelAttemptsKey.Int(comp.Attempts),
	)
	if comp.FinishReason != "" {
		span.SetAttributes(semconv.GenAIResponseFinishReasons(string(comp.FinishReason)))
	}
	if redact, ok := tracing.Content(); ok && (comp.Content != "" || len(comp.ToolCalls) > 0) {
		out := genAIMessage{Role: openai.ChatMessageRoleAssistant, Parts: parts(comp.Message()), FinishReason: string(comp.FinishReason)}
		span.SetAttributes(semconv.GenAIOutputMessagesKey.String(redact(spanJSON([]genAIMessage{out}))))
	}
	tracing.End(span, err)
}

// startTool starts the span of one tool call: "execute_tool {name}",
// gen_ai.operation.name execute_tool, gen_ai.tool.name, gen_ai.tool.call.id and
// gen_ai.tool.type function; the arguments (gen_ai.tool.call.arguments) only when
// tracing.Content allows.
func startTool(ctx context.Context, tc openai.ToolCall) (context.Context, trace.Span) {
	ctx, span := tracing.Start(ctx, "execute_tool "+tc.Function.Name)
	if !span.IsRecording() {
		return ctx, span
	}
	span.SetAttributes(semconv.GenAIOperationNameExecuteTool, semconv.GenAIToolName(tc.Function.Name),
		semconv.GenAIToolType("function"))
	if tc.ID != "" {
		span.SetAttributes(semconv.GenAIToolCallID(tc.ID))
	}
	if redact, ok := tracing.Content(); ok {
		span.SetAttributes(semconv.GenAIToolCallArgumentsKey.String(redact(tc.Function.Arguments)))
	}
	return ctx, span
}

// endTool ends a tool call's span with its outcome (toolOutcomeKey), and its result
// (gen_ai.tool.call.result) when tracing.Content allows.
func endTool(ctx context.Context, span trace.Span, out string, err error) {
	if !span.IsRecording() {
		span.End()
		return
	}
	outcome := "ok"
	switch {
	case err != nil && ctx.Err() == nil && (tracing.ErrorType(err) == "timeout" || strings.HasPrefix(err.Error(), "timed out after")):
		outcome = "timeout" // toolRunner.invoke's own timeout says so in words
	case err != nil:
		outcome = "error"
	}
	span.SetAttributes(toolOutcomeKey.String(outcome))
	if redact, ok := tracing.Content(); ok && err == nil {
		span.SetAttributes(semconv.GenAIToolCallResultKey.String(redact(out)))
	}
	tracing.End(span, err)
}

// genAIMessage and genAIPart are a message as gen_ai.input.messages and
// gen_ai.output.messages record it (the conventions' JSON schema of messages: a role
// and parts of type text, tool_call or tool_call_response).
type genAIMessage struct {
	Role         string      `json:"role"`
	Parts        []genAIPart `json:"parts"`
	FinishReason string      `json:"finish_reason,omitempty"`
}

type genAIPart struct {
	Type      string          `json:"type"`
	Content   string          `json:"content,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Response  string          `json:"response,omitempty"`
}

// chatInput splits messages into the system instructions (as parts) and the other
// messages.
func chatInput(messages []openai.ChatCompletionMessage) (system []genAIPart, input []genAIMessage) {
	for _, m := range messages {
		if m.Role == openai.ChatMessageRoleSystem || m.Role == openai.ChatMessageRoleDeveloper {
			system = append(system, parts(m)...)
			continue
		}
		input = append(input, genAIMessage{Role: m.Role, Parts: parts(m)})
	}
	return system, input
}

// parts returns m's content, tool calls and tool result as parts.
func parts(m openai.ChatCompletionMessage) []genAIPart {
	var ps []genAIPart
	if m.Role == openai.ChatMessageRoleTool {
		return append(ps, genAIPart{Type: "tool_call_response", ID: m.ToolCallID, Response: m.Content})
	}
	if m.Content != "" {
		ps = append(ps, genAIPart{Type: "text", Content: m.Content})
	}
	for _, p := range m.MultiContent {
		if p.Type == openai.ChatMessagePartTypeText {
			ps = append(ps, genAIPart{Type: "text", Content: p.Text})
		}
	}
	for _, tc := range m.ToolCalls {
		var args json.RawMessage
		if json.Valid([]byte(tc.Function.Arguments)) {
			args = json.RawMessage(tc.Function.Arguments)
		}
		ps = append(ps, genAIPart{Type: "tool_call", ID: tc.ID, Name: tc.Function.Name, Arguments: args})
	}
	return ps
}

func spanJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}
