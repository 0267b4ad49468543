package agents_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/agents/toolbox"
)

func noop(context.Context, json.RawMessage) (string, error) { return "ok", nil }

func TestRegistryRegister(t *testing.T) {
	valid := agents.ToolSpec{Name: "lookup-record_2", Description: "Find a record."}
	tests := []struct {
		name string
		spec agents.ToolSpec
		tool agents.Tool
		want error
	}{
		{"Valid", valid, agents.ToolFunc(noop), nil},
		{"EmptyName", agents.ToolSpec{Description: "d"}, agents.ToolFunc(noop), agents.ErrInvalidTool},
		{"BadCharacters", agents.ToolSpec{Name: "get.time", Description: "d"}, agents.ToolFunc(noop), agents.ErrInvalidTool},
		{"Space", agents.ToolSpec{Name: "get time", Description: "d"}, agents.ToolFunc(noop), agents.ErrInvalidTool},
		{"TooLong", agents.ToolSpec{Name: strings.Repeat("a", 65), Description: "d"}, agents.ToolFunc(noop), agents.ErrInvalidTool},
		{"MaxLength", agents.ToolSpec{Name: strings.Repeat("a", 64), Description: "d"}, agents.ToolFunc(noop), nil},
		{"NoDescription", agents.ToolSpec{Name: "x"}, agents.ToolFunc(noop), agents.ErrInvalidTool},
		{"NilTool", agents.ToolSpec{Name: "x", Description: "d"}, nil, agents.ErrInvalidTool},
		{"BadSchema", agents.ToolSpec{Name: "x", Description: "d", Parameters: json.RawMessage(`{"type":`)}, agents.ToolFunc(noop), agents.ErrInvalidTool},
		{"SchemaNotObject", agents.ToolSpec{Name: "x", Description: "d", Parameters: json.RawMessage(`{"type":"string"}`)}, agents.ToolFunc(noop), agents.ErrInvalidTool},
		{"SchemaArray", agents.ToolSpec{Name: "x", Description: "d", Parameters: json.RawMessage(`[]`)}, agents.ToolFunc(noop), agents.ErrInvalidTool},
		{"NegativeTimeout", agents.ToolSpec{Name: "x", Description: "d", Timeout: -time.Second}, agents.ToolFunc(noop), agents.ErrInvalidTool},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := agents.NewRegistry().Register(tt.spec, tt.tool)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Errorf("Register = %v, want %v", err, tt.want)
			}
		})
	}

	t.Run("Duplicate", func(t *testing.T) {
		r := agents.NewRegistry()
		if err := r.Register(valid, agents.ToolFunc(noop)); err != nil {
			t.Fatal(err)
		}
		if err := r.Register(valid, agents.ToolFunc(noop)); !errors.Is(err, agents.ErrDuplicateTool) {
			t.Errorf("err = %v, want ErrDuplicateTool", err)
		}
		if r.Len() != 1 {
			t.Errorf("Len() = %d", r.Len())
		}
	})

	t.Run("ZeroRegistry", func(t *testing.T) {
		var r agents.Registry
		if err := r.Register(valid, agents.ToolFunc(noop)); err != nil {
			t.Fatal(err)
		}
		if _, _, ok := r.Lookup(valid.Name); !ok {
			t.Error("Lookup failed")
		}
	})
}

func TestRegistryListing(t *testing.T) {
	r := agents.NewRegistry()
	r.MustRegister(agents.ToolSpec{Name: "zeta", Description: "Z.", Category: "records"}, agents.ToolFunc(noop))
	r.MustRegister(agents.ToolSpec{Name: "alpha", Description: "A.", Category: "records", Timeout: time.Second,
		Parameters: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`)}, agents.ToolFunc(noop))
	if err := toolbox.Register(r); err != nil {
		t.Fatal(err)
	}

	spec, tool, ok := r.Lookup("zeta")
	if !ok || tool == nil || spec.Category != "records" || string(spec.Parameters) != `{"type":"object","properties":{}}` {
		t.Errorf("Lookup(zeta) = %+v, %v, %v", spec, tool, ok)
	}
	if _, _, ok := r.Lookup("nope"); ok {
		t.Error("Lookup(nope) found something")
	}
	if got := strings.Join(r.Names(), ","); got != "alpha,calculate,current_time,zeta" {
		t.Errorf("Names() = %s", got)
	}

	tools := r.OpenAITools()
	if len(tools) != 4 {
		t.Fatalf("OpenAITools() has %d tools", len(tools))
	}
	b, err := json.Marshal(tools[0])
	if err != nil {
		t.Fatal(err)
	}
	want := `{"function":{"name":"alpha","description":"A.","parameters":{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}},"type":"function"}`
	if string(b) != want {
		t.Errorf("tools[0] =\n%s\nwant\n%s", b, want)
	}

	cats := r.Categories()
	if len(cats) != 2 || cats[0].Name != "general" || cats[1].Name != "records" ||
		cats[0].Tools[0].Name != "calculate" || cats[0].Tools[1].Name != "current_time" ||
		cats[1].Tools[0].Name != "alpha" || cats[1].Tools[1].Name != "zeta" {
		t.Errorf("Categories() = %+v", cats)
	}
	if d := r.Describe(); !strings.HasPrefix(d, "general:\n- calculate: ") || !strings.Contains(d, "\nrecords:\n- alpha: A.\n- zeta: Z.\n") {
		t.Errorf("Describe() =\n%s", d)
	}
	if agents.NewRegistry().OpenAITools() != nil {
		t.Error("an empty registry should offer no tools")
	}

	// The lists are the caller's: changing one changes nothing for the next caller, and
	// a tool registered later is in the next lists.
	specs := r.Specs()
	specs[0].Name, tools[0] = "changed", openai.Tool{Type: "changed"}
	_ = append(r.OpenAITools()[:1], openai.Tool{Type: "appended"})
	listed := func() string {
		var names []string
		for _, tool := range r.OpenAITools() {
			names = append(names, string(tool.Type)+":"+tool.Function.Name)
		}
		return strings.Join(r.Names(), ",") + " " + strings.Join(names, ",")
	}
	if got, want := listed(), "alpha,calculate,current_time,zeta function:alpha,function:calculate,function:current_time,function:zeta"; got != want {
		t.Errorf("after changes to the lists: %s, want %s", got, want)
	}
	r.MustRegister(agents.ToolSpec{Name: "beta", Description: "B.", Category: "records"}, agents.ToolFunc(noop))
	if got, want := listed(), "alpha,beta,calculate,current_time,zeta function:alpha,function:beta,function:calculate,function:current_time,function:zeta"; got != want {
		t.Errorf("after a Register: %s, want %s", got, want)
	}
}

func TestInferTool(t *testing.T) {
	type args struct {
		City  string `json:"city" description:"the city name"`
		Units string `json:"units,omitempty" enum:"c,f"`
		Days  int    `json:"days,omitempty"`
	}
	spec, tool, err := agents.InferTool("forecast", "Get the forecast.", func(_ context.Context, a args) (string, error) {
		return a.City + "/" + a.Units, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(spec.Parameters, &schema); err != nil {
		t.Fatal(err)
	}
	if schema.Type != "object" || len(schema.Properties) != 3 || strings.Join(schema.Required, ",") != "city" {
		t.Errorf("schema = %s", spec.Parameters)
	}
	if !strings.Contains(string(schema.Properties["city"]), "the city name") || !strings.Contains(string(schema.Properties["units"]), `"enum":["c","f"]`) {
		t.Errorf("schema = %s", spec.Parameters)
	}
	if err := agents.NewRegistry().Register(spec, tool); err != nil {
		t.Errorf("Register: %v", err)
	}
	out, err := tool.Run(context.Background(), json.RawMessage(`{"city":"Oslo","units":"c"}`))
	if err != nil || out != "Oslo/c" {
		t.Errorf("Run = %q, %v", out, err)
	}
	if _, err := tool.Run(context.Background(), json.RawMessage(`{"city":3}`)); err == nil {
		t.Error("Run accepted arguments of the wrong type")
	}

	if _, _, err := agents.InferTool("bad", "d", func(context.Context, map[string]any) (string, error) { return "", nil }); !errors.Is(err, agents.ErrInvalidTool) {
		t.Errorf("InferTool(map) err = %v", err)
	}
	if _, _, err := agents.InferTool("bad", "d", func(context.Context, string) (string, error) { return "", nil }); !errors.Is(err, agents.ErrInvalidTool) {
		t.Errorf("InferTool(string) err = %v", err)
	}
}
