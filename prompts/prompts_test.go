package prompts_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/prompts"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// representative data for every template, by name.
var samples = map[string]any{
	prompts.ExecutorSystem: prompts.ExecutorSystemData{
		Date: "Tuesday, 14 May 2024 (UTC)",
		Categories: []prompts.ToolCategory{
			{Name: "general", Tools: []prompts.Tool{
				{Name: "calculate", Description: "Evaluate an arithmetic expression."},
				{Name: "current_time", Description: "Get the current date and time."},
			}},
			{Name: "records", Tools: []prompts.Tool{
				{Name: "lookup_record", Description: "Find a record by id."},
			}},
		},
		Summary: "The user asked about Q3 budgets; the answer was 1.2M.",
	},
	prompts.FinalAnswer:  prompts.FinalAnswerData{MaxSteps: 8},
	prompts.ScopeSystem:  prompts.ScopeData{Description: "questions about ACME's HR policies", ToolName: "classify_scope"},
	prompts.ScopeRequest: prompts.ScopeRequestData{Recent: []prompts.Turn{{Role: "user", Text: "How many vacation days?"}, {Role: "assistant", Text: "25."}}, Text: "and sick days?\nthanks"},
	prompts.ScopeRefusal: prompts.ScopeRefusalData{Description: "questions about ACME's HR policies", UserID: "U123"},
}

func TestParse(t *testing.T) {
	s, err := prompts.Parse()
	if err != nil {
		t.Fatal(err)
	}
	names := s.Names()
	if len(names) != len(samples) {
		t.Errorf("Names() = %v, want one per sample (%d)", names, len(samples))
	}
	for _, name := range names {
		if _, ok := samples[name]; !ok {
			t.Errorf("template %q has no sample data in this test", name)
		}
	}
}

func TestRender(t *testing.T) {
	s := prompts.MustParse()
	for name, data := range samples {
		t.Run(name, func(t *testing.T) {
			out, err := s.Render(name, data)
			if err != nil {
				t.Fatal(err)
			}
			if out == "" || strings.Contains(out, "<no value>") {
				t.Errorf("Render(%s) = %q", name, out)
			}
			if out != strings.TrimSpace(out) {
				t.Errorf("Render(%s) is not trimmed", name)
			}
		})
	}
}

func TestRenderExecutorSystemGolden(t *testing.T) {
	s := prompts.MustParse()
	out, err := s.Render(prompts.ExecutorSystem, samples[prompts.ExecutorSystem])
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "executor_system.golden", out)

	t.Run("NoTools", func(t *testing.T) {
		out, err := s.Render(prompts.ExecutorSystem, prompts.ExecutorSystemData{Date: "Tuesday, 14 May 2024"})
		if err != nil {
			t.Fatal(err)
		}
		golden(t, "executor_system_no_tools.golden", out)
	})
	t.Run("ToolRules", func(t *testing.T) {
		// The built-in firm rules are in the default prompt, word for word.
		base, _ := s.Render(prompts.ExecutorSystem, samples[prompts.ExecutorSystem])
		for _, rule := range []string{prompts.GroundingRule, prompts.NoRepeatRule} {
			if !strings.Contains(base, "- "+rule+":") {
				t.Errorf("default prompt lacks the rule %q", rule)
			}
		}
		// Instructions with their own "## Tool rules" section replace them.
		d := samples[prompts.ExecutorSystem].(prompts.ExecutorSystemData)
		d.Instructions = "## Tool rules\n- Answer general questions from what you know; use tools only for live data."
		d.OwnToolRules = prompts.HasToolRules(d.Instructions)
		out, err := s.Render(prompts.ExecutorSystem, d)
		if err != nil {
			t.Fatal(err)
		}
		golden(t, "executor_system_own_rules.golden", out)
		if strings.Contains(out, prompts.GroundingRule) || strings.Contains(out, prompts.NoRepeatRule) {
			t.Errorf("prompt with its own tool rules still carries the built-in ones:\n%s", out)
		}
	})
}

func TestHasToolRules(t *testing.T) {
	for in, want := range map[string]bool{
		"":                                 false,
		"## Workflow patterns\n- lookup":   false,
		"Tool rules: none":                 false,
		"## Tool rules\n- relaxed":         true,
		"intro\n  ## TOOL RULES  \n- free": true,
		"### Tool rules\n- nested":         false,
	} {
		if got := prompts.HasToolRules(in); got != want {
			t.Errorf("HasToolRules(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestRenderScopeRequest(t *testing.T) {
	s := prompts.MustParse()
	out, err := s.Render(prompts.ScopeRequest, prompts.ScopeRequestData{Text: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "Message to classify:\n> hello"; out != want {
		t.Errorf("got %q, want %q", out, want)
	}
}

func TestRenderErrors(t *testing.T) {
	s := prompts.MustParse()
	t.Run("UnknownName", func(t *testing.T) {
		if _, err := s.Render("nope", nil); err == nil || !strings.Contains(err.Error(), `"nope"`) {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("MissingKey", func(t *testing.T) {
		_, err := s.Render(prompts.FinalAnswer, map[string]any{})
		if err == nil {
			t.Fatal("want an error for a missing map key")
		}
	})
	t.Run("WrongType", func(t *testing.T) {
		if _, err := s.Render(prompts.ScopeSystem, prompts.FinalAnswerData{}); err == nil {
			t.Fatal("want an error for data without the template's fields")
		}
	})
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got+"\n" != string(want) {
		t.Errorf("%s differs from the golden file (run go test -update after checking):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// TestMemo checks that a Memo returns Set.Render's text, and renders again when any
// part of the data changes: a tool's description, the date, the summary.
func TestMemo(t *testing.T) {
	s := prompts.MustParse()
	m := prompts.NewMemo[prompts.ExecutorSystemData](s, prompts.ExecutorSystem)
	data := func(date, desc, summary string) prompts.ExecutorSystemData {
		return prompts.ExecutorSystemData{Date: date, Summary: summary, Categories: []prompts.ToolCategory{
			{Name: "general", Tools: []prompts.Tool{{Name: "calculate", Description: desc}}},
		}}
	}
	for _, d := range []prompts.ExecutorSystemData{
		data("Tuesday, 14 May 2024 (UTC)", "Evaluate an expression.", ""),
		data("Tuesday, 14 May 2024 (UTC)", "Evaluate an expression.", ""),
		data("Tuesday, 14 May 2024 (UTC)", "Evaluate an arithmetic expression.", ""),
		data("Wednesday, 15 May 2024 (UTC)", "Evaluate an arithmetic expression.", ""),
		data("Wednesday, 15 May 2024 (UTC)", "Evaluate an arithmetic expression.", "They asked about Q3."),
		data("Tuesday, 14 May 2024 (UTC)", "Evaluate an expression.", ""),
	} {
		want, err := s.Render(prompts.ExecutorSystem, d)
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.Render(d)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("Memo.Render(%+v) =\n%s\nwant\n%s", d, got, want)
		}
	}
	bad := prompts.NewMemo[prompts.FinalAnswerData](s, "no_such_template")
	if _, err := bad.Render(prompts.FinalAnswerData{}); err == nil {
		t.Error("Memo of an unknown template rendered")
	}
}
