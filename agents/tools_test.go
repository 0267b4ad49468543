package agents_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/threadwright/threadwright/agents"
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
	if err := agents.RegisterBuiltins(r); err != nil {
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

func TestCurrentTime(t *testing.T) {
	now := func() time.Time { return time.Date(2024, 12, 31, 23, 30, 0, 0, time.UTC) }
	spec, tool := agents.CurrentTime(now)
	if spec.Name != "current_time" || !json.Valid(spec.Parameters) {
		t.Errorf("spec = %+v", spec)
	}
	tests := []struct {
		args, want, err string
	}{
		{`{}`, "2024-12-31T23:30:00Z (Tuesday, 31 December 2024, 23:30 UTC, UTC)", ""},
		{`{"timezone":""}`, "2024-12-31T23:30:00Z (Tuesday, 31 December 2024, 23:30 UTC, UTC)", ""},
		{`{"timezone":"Asia/Tokyo"}`, "2025-01-01T08:30:00+09:00 (Wednesday, 1 January 2025, 08:30 JST, Asia/Tokyo)", ""},
		{`{"timezone":"America/New_York"}`, "2024-12-31T18:30:00-05:00 (Tuesday, 31 December 2024, 18:30 EST, America/New_York)", ""},
		{`{"timezone":"Mars/Olympus"}`, "", `unknown time zone "Mars/Olympus"`},
		{`{"timezone":5}`, "", "invalid arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			got, err := tool.Run(context.Background(), json.RawMessage(tt.args))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestEvaluate(t *testing.T) {
	tests := []struct {
		expr, want, err string
	}{
		{"1 + 2 * 3", "7", ""},
		{"(1 + 2) * 3", "9", ""},
		{"7 / 2", "3.5", ""},
		{"1 / 3", "0.3333333333333333", ""},
		{"0.1 + 0.2", "0.3", ""},
		{"2 * 3.5", "7", ""},
		{"-(3 - 5)", "2", ""},
		{"+4", "4", ""},
		{"10 % 3", "1", ""},
		{"10.0 % 3", "1", ""},
		{"1,000,000 * 3", "3000000", ""},
		{"6 × 7 ÷ 2 − 1", "20", ""},
		{"0x10 + 1e3", "1016", ""},
		{"99999999999999999999 * 99999999999999999999", "1e+40", ""},
		{"123456789012345678901234567890", "123456789012345678901234567890", ""},
		{"", "", "empty expression"},
		{strings.Repeat("1+", 600) + "1", "", "longer than"},
		{"1 / 0", "", "division by zero"},
		{"1 % 0", "", "division by zero"},
		{"1.5 % 1", "", "whole numbers"},
		{"2 ^ 3", "", "^ is not supported"},
		{"1 << 2", "", "operator << is not supported"},
		{"x + 1", "", "x is not allowed"},
		{"os.Exit(1)", "", "os.Exit(1) is not allowed"},
		{`"a" + "b"`, "", `"a" is not a number`},
		{"'a'", "", "'a' is not a number"},
		{"1 +", "", "cannot parse"},
		{"1e400 * 1e400", "", "too large"},
		{"!1", "", "operator ! is not supported"},
		{"2i", "", "2i is not a number"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			got, err := agents.Evaluate(tt.expr)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("Evaluate(%q) = %q, %v; want error %q", tt.expr, got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("Evaluate(%q) = %q, %v; want %q", tt.expr, got, err, tt.want)
			}
		})
	}

	_, calc := agents.Calculate()
	if got, err := calc.Run(context.Background(), json.RawMessage(`{"expression":"(1200 * 1.2) / 7"}`)); err != nil || got != "205.7142857142857" {
		t.Errorf("calculate = %q, %v", got, err)
	}
}
