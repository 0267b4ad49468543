package agents_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/agents/toolbox"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// Register a tool written as a plain function with ToolFunc.
func ExampleRegistry_Register() {
	reg := agents.NewRegistry()
	err := reg.Register(agents.ToolSpec{
		Name:        "shout",
		Description: "Repeat a text in capitals.",
		Category:    "text",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
	}, agents.ToolFunc(func(ctx context.Context, args json.RawMessage) (string, error) {
		var a struct{ Text string }
		if err := json.Unmarshal(args, &a); err != nil {
			return "", err
		}
		return strings.ToUpper(a.Text), nil
	}))
	if err != nil {
		panic(err)
	}
	if err := toolbox.Register(reg); err != nil {
		panic(err)
	}

	_, tool, _ := reg.Lookup("shout")
	out, _ := tool.Run(context.Background(), json.RawMessage(`{"text":"hello"}`))
	fmt.Println(out)
	fmt.Print(reg.Describe())
	// Output:
	// HELLO
	// general:
	// - calculate: Evaluate an arithmetic expression exactly. Supports numbers, + - * / %, unary minus and parentheses; no functions or variables.
	// - current_time: Get the current date, time and weekday, in UTC or in a given IANA time zone.
	//
	// text:
	// - shout: Repeat a text in capitals.
}

// Derive a tool's JSON schema from the struct its function takes.
func ExampleInferTool() {
	type greetArgs struct {
		Name string `json:"name" description:"who to greet"`
		Lang string `json:"lang,omitempty" enum:"en,fr"`
	}
	spec, tool, err := agents.InferTool("greet", "Greet someone.", func(_ context.Context, a greetArgs) (string, error) {
		if a.Lang == "fr" {
			return "Bonjour " + a.Name, nil
		}
		return "Hello " + a.Name, nil
	})
	if err != nil {
		panic(err)
	}
	out, _ := tool.Run(context.Background(), json.RawMessage(`{"name":"Ada","lang":"fr"}`))
	fmt.Println(string(spec.Parameters))
	fmt.Println(out)
	// Output:
	// {"type":"object","properties":{"lang":{"type":"string","enum":["en","fr"]},"name":{"type":"string","description":"who to greet"}},"required":["name"],"additionalProperties":false}
	// Bonjour Ada
}

// A whole turn against the fake server: the model calls calculate, then answers.
func ExampleExecutor_Execute() {
	srv := openaitest.NewServer()
	defer srv.Close()
	srv.Push(
		openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: "calculate", Arguments: `{"expression":"6*7"}`}}},
		openaitest.Response{Text: "Six times seven is **42**."},
	)

	reg := agents.NewRegistry()
	if err := toolbox.Register(reg); err != nil {
		panic(err)
	}
	exec := agents.NewExecutor(agents.ExecutorConfig{
		Client:   agents.NewClient(agents.ClientConfig{BaseURL: srv.URL(), APIKey: "test"}),
		Model:    "gpt-4o-mini",
		Registry: reg,
		Logger:   slog.New(slog.DiscardHandler),
	})
	f, err := exec.Execute(context.Background(), prompt("What is 6*7?"), func(status string) { fmt.Println(status) })
	if err != nil {
		panic(err)
	}
	reply, _ := agents.NewSynthesizer().Synthesize(context.Background(), prompt("What is 6*7?"), f)
	fmt.Println(f.ToolCalls[0].Name, "→", f.ToolCalls[0].Result)
	fmt.Println(reply)
	// Output:
	// Running calculate…
	// calculate → 42
	// Six times seven is *42*.
}
