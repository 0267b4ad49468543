package prompts_test

import (
	"strings"
	"testing"

	"github.com/threadwright/threadwright/prompts"
)

// The summarizer's templates join the samples of prompts_test.go, so TestParse and
// TestRender cover them too.
func init() {
	for name, data := range summarySamples {
		samples[name] = data
	}
}

var summarySamples = map[string]any{
	prompts.SummarizeSystem: prompts.SummarizeSystemData{Workflow: "product-brief", Language: "Russian (русский)", MaxChars: 3900},
	prompts.SummarizeRequest: prompts.SummarizeRequestData{
		Previous: "- <@U1> started the brief.\n- The problem statement was approved.",
		Messages: []prompts.SummaryMessage{
			{Role: "context", Author: "<@U2>", Text: "We lose 6 hours a week to triage."},
			{Role: "user", Author: "<@U1>", Text: "Focus on mid-size companies.\nBudget is €40k."},
			{Role: "assistant", Text: "Noted: *mid-size companies*, budget €40k."},
			{Role: "user", Text: "who decides the launch date?"},
		},
	},
}

func TestRenderSummaryGolden(t *testing.T) {
	s := prompts.MustParse()
	for name, data := range summarySamples {
		t.Run(name, func(t *testing.T) {
			out, err := s.Render(name, data)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, name+".golden", out)
		})
	}

	// The sparse cases: a free conversation in an unknown language; a first summary.
	sparse := []struct {
		name, template string
		data           any
	}{
		{"summarize_system_free", prompts.SummarizeSystem, prompts.SummarizeSystemData{MaxChars: 4000}},
		{"summarize_request_first", prompts.SummarizeRequest, prompts.SummarizeRequestData{
			Messages: []prompts.SummaryMessage{{Role: "user", Author: "<@U1>", Text: "hi"}, {Role: "assistant", Text: "Hello!"}},
		}},
	}
	for _, tc := range sparse {
		t.Run(tc.name, func(t *testing.T) {
			out, err := s.Render(tc.template, tc.data)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name+".golden", out)
		})
	}
}

func TestRenderSummarizeSystemWorkflow(t *testing.T) {
	s := prompts.MustParse()
	for _, tc := range []struct {
		workflow string
		want     bool
	}{{"proposal", true}, {"", false}} {
		out, err := s.Render(prompts.SummarizeSystem, prompts.SummarizeSystemData{Workflow: tc.workflow, MaxChars: 100})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(out, "Do not repeat artifact texts"); got != tc.want {
			t.Errorf("workflow %q: workflow note present = %t, want %t:\n%s", tc.workflow, got, tc.want, out)
		}
		if !strings.Contains(out, "At most 100 characters") {
			t.Errorf("workflow %q: no length bound:\n%s", tc.workflow, out)
		}
	}
}
