package prompts_test

import (
	"strings"
	"testing"

	"github.com/threadwright/threadwright/prompts"
)

// The artifact-workflow templates join the samples of prompts_test.go, so TestParse
// and TestRender cover them too.
func init() {
	for name, data := range workflowSamples {
		samples[name] = data
	}
}

var sampleOptions = []prompts.Option{
	{Label: "A", Title: "Time lost to manual triage", Text: "Support leads spend 6 hours a week sorting tickets by hand."},
	{Label: "B", Title: "Missed SLAs", Text: "One ticket in five breaches its SLA because it waits in the wrong queue."},
	{Label: "C", Title: "Invisible trends", Text: "Nobody sees recurring issues until customers churn."},
}

var workflowSamples = map[string]any{
	prompts.WorkflowSystem: prompts.WorkflowSystemData{
		Workflow: prompts.WorkflowInfo{Title: "Product brief", Description: "A one-page brief for a new product.\n"},
		Artifact: &prompts.ArtifactInfo{
			ID: "audience", Title: "Audience", Description: "Who the product is for.", Mode: "choice",
			Guidance: "Name one primary audience; mention secondary ones briefly.\n",
			Criteria: []prompts.Criterion{
				{ID: "specific", Description: "Names a concrete group of people"},
				{ID: "grounded", Description: "Follows from the problem statement"},
			},
		},
		Dependencies: []prompts.ArtifactText{{ID: "problem", Title: "Problem", Text: "Support teams drown in unsorted tickets.\n\n- 6 hours a week lost"}},
		Others:       []prompts.ArtifactText{{ID: "research", Title: "Research", Text: "Interviews with 12 support leads…"}},
		Language:     "Russian (русский)",
		Summary:      "The team started the brief and approved the problem.",
		History:      []prompts.Turn{{Role: "user", Text: "Let's focus on mid-size companies."}, {Role: "assistant", Text: "Options for *Audience*"}},
		ToolName:     "commit_artifact_options",
	},
	prompts.ArtifactOptions: prompts.ArtifactOptionsData{
		Title: "Audience", Count: 3, Labels: []string{"A", "B", "C"},
		Instructions: "more playful", Previous: sampleOptions, ToolName: "commit_artifact_options",
	},
	prompts.ArtifactSelection: prompts.ArtifactSelectionData{
		Title: "Problem", Options: sampleOptions, Labels: []string{"A", "B", "C"},
		Reply: "Вариант Б, но короче", ToolName: "commit_artifact_selection",
	},
	prompts.ArtifactWrite: prompts.ArtifactWriteData{
		Title: "Problem", Selected: &sampleOptions[1], Previous: "An older problem statement.",
		Instructions: "shorter", ToolName: "commit_artifact_final_text",
	},
	prompts.ArtifactRevise: prompts.ArtifactReviseData{
		Title: "Problem", Current: "One ticket in five breaches its SLA.\nIt waits in the wrong queue.",
		Instructions: "Add a number for the cost.", ToolName: "commit_artifact_final_text",
	},
	prompts.ArtifactEvaluate: prompts.ArtifactEvaluateData{
		Title:    "Problem",
		Criteria: []prompts.Criterion{{ID: "specific", Description: "States a measurable problem"}, {ID: "short", Description: "At most 100 words"}},
		Text:     "One ticket in five breaches its SLA.", ToolName: "commit_evaluation",
	},
	prompts.DocsetSummary:  prompts.DocsetSummaryData{Title: "Product brief", Instructions: "mention the budget", ToolName: "commit_final_docset"},
	prompts.CommitReminder: prompts.CommitReminderData{ToolName: "commit_artifact_options", Problem: "it has 2 options; exactly 3 are needed", Try: 2, Tries: 3},
}

func TestRenderWorkflowGolden(t *testing.T) {
	s := prompts.MustParse()
	for name, data := range workflowSamples {
		t.Run(name, func(t *testing.T) {
			out, err := s.Render(name, data)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, name+".golden", out)
		})
	}

	// The sparse cases: no artifact, nothing approved, no language, no history; a
	// first proposal; a draft written from scratch; a revision without instructions;
	// a reminder after an answer in text, on the last try.
	sparse := []struct {
		name, template string
		data           any
	}{
		{"workflow_system_summary", prompts.WorkflowSystem, prompts.WorkflowSystemData{
			Workflow: prompts.WorkflowInfo{Title: "Grant proposal"}, ToolName: "commit_final_docset",
		}},
		{"workflow_system_auto", prompts.WorkflowSystem, prompts.WorkflowSystemData{
			Workflow: prompts.WorkflowInfo{Title: "Grant proposal"},
			Artifact: &prompts.ArtifactInfo{ID: "research", Title: "Research", Mode: "auto"},
			Language: "English", ToolName: "commit_artifact_final_text",
		}},
		{"artifact_options_first", prompts.ArtifactOptions, prompts.ArtifactOptionsData{
			Title: "Name", Count: 2, Labels: []string{"A", "B"}, ToolName: "commit_artifact_options",
		}},
		{"artifact_write_draft", prompts.ArtifactWrite, prompts.ArtifactWriteData{Title: "Budget", ToolName: "commit_artifact_final_text"}},
		{"artifact_revise_no_instructions", prompts.ArtifactRevise, prompts.ArtifactReviseData{Title: "Budget", Current: "€10,000.", ToolName: "commit_artifact_final_text"}},
		{"commit_reminder_text", prompts.CommitReminder, prompts.CommitReminderData{ToolName: "commit_artifact_final_text", Try: 3, Tries: 3}},
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

func TestRenderWorkflowSystemModes(t *testing.T) {
	s := prompts.MustParse()
	for mode, want := range map[string]string{
		"choice": "you propose options",
		"draft":  "people review it and may ask for changes",
		"":       "people review it and may ask for changes",
		"auto":   "used without review",
	} {
		out, err := s.Render(prompts.WorkflowSystem, prompts.WorkflowSystemData{
			Workflow: prompts.WorkflowInfo{Title: "W"},
			Artifact: &prompts.ArtifactInfo{ID: "a", Title: "A", Mode: mode},
			ToolName: "commit_artifact_final_text",
		})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, want) {
			t.Errorf("mode %q: the prompt lacks %q:\n%s", mode, want, out)
		}
	}
}
