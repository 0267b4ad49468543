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
		Workflow: prompts.WorkflowInfo{Title: "Product brief", Description: "A one-page brief for a new product.\n", Inputs: []prompts.Input{{ID: "topic", Label: "What is it about?", Value: "A ticket triage bot for support teams"}}},
		Artifact: &prompts.ArtifactInfo{
			ID: "audience", Title: "Audience", Description: "Who the product is for.", Mode: "choice",
			Guidance: "Name one primary audience; mention secondary ones briefly.\n",
			Criteria: []prompts.Criterion{
				{ID: "specific", Description: "Names a concrete group of people", Critical: true},
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
		Criteria: []prompts.Criterion{{ID: "specific", Description: "States a measurable problem", Critical: true}, {ID: "short", Description: "At most 100 words"}},
		Text:     "One ticket in five breaches its SLA.", ToolName: "commit_evaluation",
	},
	prompts.DocsetSummary:  prompts.DocsetSummaryData{Title: "Product brief", Instructions: "mention the budget", ToolName: "commit_final_docset"},
	prompts.CommitReminder: prompts.CommitReminderData{ToolName: "commit_artifact_options", Problem: "it has 2 options; exactly 3 are needed", Try: 2, Tries: 3},
	prompts.RecoveryPlan: prompts.RecoveryPlanData{
		Title: "Research", Item: &sampleItem, Instructions: "Find the prices of the three largest competitors.",
		Failures: []string{"the model could not do the task: no pricing pages found for Acme Desk", "agents: the model did not call commit_artifact_final_text with valid arguments in 3 tries"},
		Omitted:  1, Tools: sampleTools, ToolName: "commit_recovery_plan",
	},
}

var sampleItem = prompts.Item{Number: 2, Total: 5, Title: "Competitor pricing", Brief: "What do Acme Desk and HelpHub charge per agent?\nInclude annual plans."}

var sampleTools = []prompts.Tool{
	{Name: "search_knowledge", Description: "Search the team's knowledge base."},
	{Name: "web_search", Description: "Search the web."},
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
	// a reminder after an answer in text, on the last try. Then the variants of
	// automated pipelines.
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
		{"artifact_options_review", prompts.ArtifactOptions, prompts.ArtifactOptionsData{
			Title: "Outline", Count: 3, Labels: []string{"A", "B", "C"}, Review: sampleOptions,
			Criteria: []prompts.Criterion{{ID: "specific", Description: "Names a concrete group of people"}, {ID: "grounded", Description: "Follows from the problem statement"}},
			ToolName: "commit_artifact_options",
		}},
		{"artifact_write_draft", prompts.ArtifactWrite, prompts.ArtifactWriteData{Title: "Budget", ToolName: "commit_artifact_final_text"}},
		{"artifact_revise_no_instructions", prompts.ArtifactRevise, prompts.ArtifactReviseData{Title: "Budget", Current: "€10,000.", ToolName: "commit_artifact_final_text"}},
		{"commit_reminder_text", prompts.CommitReminder, prompts.CommitReminderData{ToolName: "commit_artifact_final_text", Try: 3, Tries: 3}},
		// Automated pipelines: an item with tools and the failure argument; a whole
		// auto artifact with tools; the editor pass over an item; a recovery of a
		// whole artifact without tools, instructions or recorded errors.
		{"artifact_write_item", prompts.ArtifactWrite, prompts.ArtifactWriteData{
			Title: "Research", Item: &sampleItem, Instructions: "Search for \"Acme Desk pricing 2024\" first.",
			Tools: sampleTools, Failure: true, ToolName: "commit_artifact_final_text",
		}},
		{"artifact_write_item_bare", prompts.ArtifactWrite, prompts.ArtifactWriteData{
			Title: "Chapters", Item: &prompts.Item{Number: 1, Total: 3, Title: "Introduction"}, ToolName: "commit_artifact_final_text",
		}},
		{"artifact_write_batch", prompts.ArtifactWrite, prompts.ArtifactWriteData{
			Title: "Research", Batch: []prompts.Item{{Number: 1, Total: 2, Title: "Market size"}, {Number: 2, Total: 2, Title: "Competitor pricing", Brief: sampleItem.Brief}},
			Tools: sampleTools, Failure: true, ToolName: "commit_artifact_final_text",
		}},
		{"artifact_write_tools", prompts.ArtifactWrite, prompts.ArtifactWriteData{
			Title: "Research", Tools: sampleTools, Failure: true, ToolName: "commit_artifact_final_text",
		}},
		{"artifact_revise_item", prompts.ArtifactRevise, prompts.ArtifactReviseData{
			Title: "Research", Item: &sampleItem, Current: "Acme Desk: $25 per agent a month.", Instructions: "Tighten the prose; keep every fact.",
			Failure: true, ToolName: "commit_artifact_final_text",
		}},
		{"recovery_plan_whole", prompts.RecoveryPlan, prompts.RecoveryPlanData{Title: "Research", ToolName: "commit_recovery_plan"}},
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

// TestRenderItemLine checks the item line the offline demo model reads (its regexp
// `Item (\d+) of (\d+): (.+)`): exactly once in each task that works on an item.
func TestRenderItemLine(t *testing.T) {
	s := prompts.MustParse()
	item := &prompts.Item{Number: 3, Total: 7, Title: "Pricing", Brief: "Item 9 of 9: not a line of ours"}
	for name, data := range map[string]any{
		prompts.ArtifactWrite:  prompts.ArtifactWriteData{Title: "R", Item: item, ToolName: "f"},
		prompts.ArtifactRevise: prompts.ArtifactReviseData{Title: "R", Item: item, Current: "x", ToolName: "f"},
		prompts.RecoveryPlan:   prompts.RecoveryPlanData{Title: "R", Item: item, ToolName: "f"},
	} {
		out, err := s.Render(name, data)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(out, "\nItem 3 of 7: Pricing\n"); n != 1 {
			t.Errorf("%s: the line \"Item 3 of 7: Pricing\" appears %d times:\n%s", name, n, out)
		}
		if i, j := strings.Index(out, "Item 3 of 7"), strings.Index(out, "Item 9 of 9"); i > j {
			t.Errorf("%s: the brief comes before the item line:\n%s", name, out)
		}
	}
}
