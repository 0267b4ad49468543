package prompts_test

import (
	"strings"
	"testing"

	"github.com/threadwright/threadwright/prompts"
)

// The planner's templates join the samples of prompts_test.go, so TestParse and
// TestRender cover them too.
func init() {
	for name, data := range plannerSamples {
		samples[name] = data
	}
}

var sampleResults = []prompts.TaskResult{
	{ID: "find_tickets", Description: "Find the open P1 tickets of the Billing project.", Result: "3 open P1 tickets:\n- BILL-12 Refund stuck\n- BILL-15 Double charge\n- BILL-19 Invoice PDF blank"},
	{ID: "owners", Description: "Find who owns each ticket.", Error: "The model did not answer in time. Please try again in a moment.", Result: "BILL-12: <@U7>"},
	{ID: "sla", Description: "Check each ticket against its SLA.", Result: "BILL-15 breached its SLA by 2 hours.", Incomplete: true},
}

var plannerSamples = map[string]any{
	prompts.PlannerSystem: prompts.PlannerSystemData{
		Date: "Tuesday, 14 May 2024 (UTC)",
		Categories: []prompts.ToolCategory{
			{Name: "general", Tools: []prompts.Tool{{Name: "current_time", Description: "Get the current date and time."}}},
			{Name: "tickets", Tools: []prompts.Tool{{Name: "search_tickets", Description: "Search the ticket tracker."}}},
		},
		Summary: "The team is triaging Billing incidents.\n",
	},
	prompts.PlannerUnderstand: prompts.PlannerUnderstandData{Request: "Which of them breach the SLA,\nand who owns those?", ToolName: "commit_understanding"},
	prompts.PlannerPlan: prompts.PlannerPlanData{
		Request:  "Which of them breach the SLA, and who owns those?",
		Intent:   "Find the Billing P1 tickets that breach their SLA and their owners.",
		Entities: []string{"project Billing", "open P1 tickets"}, MaxTasks: 6, ToolName: "commit_plan",
	},
	prompts.PlannerTask: prompts.PlannerTaskData{
		Request:      "Which of them breach the SLA, and who owns those?",
		Intent:       "Find the Billing P1 tickets that breach their SLA and their owners.",
		Entities:     []string{"project Billing", "open P1 tickets"},
		Task:         prompts.PlanTask{ID: "sla", Description: "Check each ticket against its SLA.\n", DependsOn: []string{"find_tickets", "owners"}, Type: prompts.TaskReasoning},
		Dependencies: sampleResults[:2],
	},
	prompts.PlannerReflect: prompts.PlannerReflectData{
		Request: "Which of them breach the SLA, and who owns those?",
		Intent:  "Find the Billing P1 tickets that breach their SLA and their owners.",
		Results: sampleResults, RoundsLeft: 2, MaxTasks: 6, ToolName: "commit_reflection",
	},
	prompts.PlannerAnswer: prompts.PlannerAnswerData{
		Request: "Which of them breach the SLA, and who owns those?",
		Intent:  "Find the Billing P1 tickets that breach their SLA and their owners.",
		Results: sampleResults, Missing: "the owner of BILL-15",
	},
	prompts.PlannerResults: sampleResults,
	prompts.PlannerRoute:   prompts.PlannerRouteData{ToolName: "commit_route"},
	prompts.PlannerRouteRequest: prompts.PlannerRouteRequestData{
		Recent: []prompts.Turn{{Role: "user", Text: "Show the Billing P1s."}, {Role: "assistant", Text: "There are 3."}},
		Text:   "Compare them with last quarter's\nand tell me who to escalate to.",
	},
}

func TestRenderPlannerGolden(t *testing.T) {
	s := prompts.MustParse()
	for name, data := range plannerSamples {
		t.Run(name, func(t *testing.T) {
			out, err := s.Render(name, data)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, name+".golden", out)
		})
	}

	// The sparse cases: no tools and no summary; a plan without entities; a first
	// task with nothing to build on; the last reflection; an answer with nothing
	// missing; a request to judge without history.
	request := "What changed in the pricing page this week?"
	sparse := []struct {
		name, template string
		data           any
	}{
		{"planner_system_no_tools", prompts.PlannerSystem, prompts.PlannerSystemData{Date: "Tuesday, 14 May 2024 (UTC)"}},
		{"planner_plan_no_entities", prompts.PlannerPlan, prompts.PlannerPlanData{
			Request: request, Intent: "List this week's changes to the pricing page.", MaxTasks: 3, ToolName: "commit_plan",
		}},
		{"planner_task_first", prompts.PlannerTask, prompts.PlannerTaskData{
			Request: request, Intent: "List this week's changes to the pricing page.",
			Task: prompts.PlanTask{ID: "fetch", Description: "Fetch the pricing page's change log."},
		}},
		{"planner_reflect_last", prompts.PlannerReflect, prompts.PlannerReflectData{
			Request: request, Intent: "List this week's changes to the pricing page.",
			Results: []prompts.TaskResult{{ID: "fetch", Description: "Fetch the change log."}}, MaxTasks: 3, ToolName: "commit_reflection",
		}},
		{"planner_answer_complete", prompts.PlannerAnswer, prompts.PlannerAnswerData{
			Request: request, Intent: "List this week's changes to the pricing page.",
			Results: []prompts.TaskResult{{ID: "fetch", Description: "Fetch the change log.", Result: "Two changes: the Team plan is €12, the Free plan lost SSO."}},
		}},
		{"planner_route_request_first", prompts.PlannerRouteRequest, prompts.PlannerRouteRequestData{Text: "hi"}},
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

func TestRenderPlannerReflectRounds(t *testing.T) {
	s := prompts.MustParse()
	for _, tc := range []struct {
		left int
		want string
	}{
		{0, "No more tasks can run"},
		{1, "This is the last round of new tasks."},
		{2, "2 more rounds of new tasks may run."},
	} {
		out, err := s.Render(prompts.PlannerReflect, prompts.PlannerReflectData{
			Request: "q", Intent: "i", Results: sampleResults[:1], RoundsLeft: tc.left, MaxTasks: 4, ToolName: "commit_reflection",
		})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, tc.want) {
			t.Errorf("RoundsLeft %d: the prompt lacks %q:\n%s", tc.left, tc.want, out)
		}
	}
}

func TestRenderPlannerResults(t *testing.T) {
	s := prompts.MustParse()
	out, err := s.Render(prompts.PlannerResults, []prompts.TaskResult{
		{ID: "a", Description: "A", Result: "found a"},
		{ID: "b", Description: "B", Error: "timed out"},
		{ID: "c", Description: "C"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "### a: A\nfound a\n\n### b: B\nFailed: timed out\n\n### c: C\n(No result.)"
	if out != want {
		t.Errorf("got\n%s\nwant\n%s", out, want)
	}
}
