package openaitest_test

import (
	"context"
	"fmt"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/testkit/openaitest"
)

func Example() {
	srv := openaitest.NewServer()
	defer srv.Close()

	// Script two answers; a handler answers whatever comes after them.
	srv.Push(
		openaitest.Response{Status: 429},
		openaitest.Response{ToolCalls: []openaitest.ToolCall{{ID: "call_1", Name: "current_time", Arguments: `{"timezone":"UTC"}`}}},
	)
	srv.Handle(func(r openaitest.Request) openaitest.Response {
		return openaitest.Response{Text: "You said: " + r.LastUserMessage()}
	})

	client := openai.NewClientWithConfig(srv.ClientConfig()) // BaseURL = srv.URL()
	req := openai.ChatCompletionRequest{
		Model:    "gpt-4o-mini",
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "what time is it?"}},
	}
	ctx := context.Background()

	_, err := client.CreateChatCompletion(ctx, req)
	fmt.Println(err)

	resp, _ := client.CreateChatCompletion(ctx, req)
	call := resp.Choices[0].Message.ToolCalls[0]
	fmt.Println(resp.Choices[0].FinishReason, call.ID, call.Function.Name, call.Function.Arguments)

	resp, _ = client.CreateChatCompletion(ctx, req)
	fmt.Println(resp.Choices[0].Message.Content)

	fmt.Println(len(srv.Requests()), "requests; last from", srv.Requests()[2].Chat.Model)
	// Output:
	// error, status code: 429, status: 429 Too Many Requests, message: openaitest: Rate limit reached for requests. Please try again later.
	// tool_calls call_1 current_time {"timezone":"UTC"}
	// You said: what time is it?
	// 3 requests; last from gpt-4o-mini
}
