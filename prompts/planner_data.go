package prompts

// The names of the planner strategy's templates (docs/architecture.md, "Assistant
// pipeline"), for Set.Render. The planner (planner.Planner, package agents/planner) sends PlannerSystem as the
// system prompt of each of its own calls and one phase template as the last user
// message: PlannerUnderstand, PlannerPlan, PlannerReflect (each answered by a forced
// commit function; CommitReminder asks again when the call is missing or rejected) and
// PlannerAnswer (answered in text). Each task of the plan runs as a ReAct executor turn
// whose request is PlannerTask. The router (planner.Router) sends PlannerRoute as the
// system prompt and PlannerRouteRequest as the user message when it lets the small
// model choose the strategy.
const (
	// PlannerSystem is the planner's system prompt: the role, the date, the tools the
	// tasks can use and the summary; data: PlannerSystemData.
	PlannerSystem = "planner_system"
	// PlannerUnderstand asks for the request's intent and entities; data:
	// PlannerUnderstandData.
	PlannerUnderstand = "planner_understand"
	// PlannerPlan asks for the plan: tasks with ids and dependencies; data:
	// PlannerPlanData.
	PlannerPlan = "planner_plan"
	// PlannerTask is the request of one task's executor run; data: PlannerTaskData.
	PlannerTask = "planner_task"
	// PlannerReflect asks whether the task results answer the request, and for new
	// tasks when they do not; data: PlannerReflectData.
	PlannerReflect = "planner_reflect"
	// PlannerAnswer asks for the final answer from every task result; data:
	// PlannerAnswerData.
	PlannerAnswer = "planner_answer"
	// PlannerResults is the block of task results that PlannerTask, PlannerReflect
	// and PlannerAnswer include ({{template "planner_results" .Results}}); data:
	// []TaskResult.
	PlannerResults = "planner_results"
	// PlannerRoute is the router's system prompt: how to choose between the ReAct and
	// the planner strategies; data: PlannerRouteData.
	PlannerRoute = "planner_route"
	// PlannerRouteRequest is the request the router judges, with the recent
	// conversation; data: PlannerRouteRequestData.
	PlannerRouteRequest = "planner_route_request"
)

// PlannerSystemData is the data of the PlannerSystem template.
type PlannerSystemData struct {
	// Date is today's date, e.g. "Tuesday, 14 May 2024 (UTC)" (only the date, for
	// prompt caching).
	Date string
	// Categories lists the tools the tasks' executor can use, grouped by category;
	// empty when it has none.
	Categories []ToolCategory
	// Summary condenses the earlier conversation, when it has been summarized.
	Summary string
	// Instructions are the deployment's own guidance for the channel
	// (EXECUTOR_INSTRUCTIONS), "" for none.
	Instructions string
}

// PlannerUnderstandData is the data of the PlannerUnderstand template.
type PlannerUnderstandData struct {
	// Request is the person's request, as typed.
	Request string
	// ToolName is the commit function (commit_understanding).
	ToolName string
}

// PlannerPlanData is the data of the PlannerPlan template.
type PlannerPlanData struct {
	// Request is the person's request, as typed.
	Request string
	// Intent is what the person wants, in one sentence, and Entities what the request
	// refers to (ids, titles, names), from the understanding phase.
	Intent   string
	Entities []string
	// MaxTasks is the most tasks a plan may have.
	MaxTasks int
	// ToolName is the commit function (commit_plan).
	ToolName string
}

// PlannerTaskData is the data of the PlannerTask template.
type PlannerTaskData struct {
	// Request is the person's request, for context; Intent and Entities are the
	// understanding of it.
	Request  string
	Intent   string
	Entities []string
	// Task is the task to do now.
	Task PlanTask
	// Dependencies are the results of the tasks Task depends on, in the plan's order.
	Dependencies []TaskResult
}

// PlanTask is one task of a plan.
type PlanTask struct {
	// ID names the task in the plan, e.g. "find_tickets".
	ID string
	// Description says what to do and what to report.
	Description string
	// DependsOn are the ids of the tasks whose results this one needs.
	DependsOn []string
	// Type is TaskTool (the task's agent calls tools) or TaskReasoning (it only
	// reasons over the request and the results it depends on, offered no tools).
	Type string
	// Tools, for a TaskTool, are the names of the only tools its agent is offered;
	// empty offers every tool the channel may use.
	Tools []string
}

// The types of a plan's task (PlanTask.Type).
const (
	// TaskTool is a task that uses tools (the selected ones, or all).
	TaskTool = "tool"
	// TaskReasoning is a task that only reasons: its model calls offer no tools.
	TaskReasoning = "reasoning"
)

// Reasoning reports whether t is a reasoning task, which is offered no tools.
func (t PlanTask) Reasoning() bool { return t.Type == TaskReasoning }

// TaskResult is a task and what its run found.
type TaskResult struct {
	ID          string
	Description string
	// Result is the task's answer (possibly shortened); empty when it failed without
	// one.
	Result string
	// Error says why the task failed; empty when it did not.
	Error string
	// Incomplete is true when the task's run was cut short (its step bound, or an
	// answer cut off), so Result may be partial.
	Incomplete bool
}

// PlannerReflectData is the data of the PlannerReflect template.
type PlannerReflectData struct {
	// Request is the person's request; Intent is what the person wants.
	Request string
	Intent  string
	// Results are every task's result so far, in the order the tasks were planned.
	Results []TaskResult
	// RoundsLeft is how many more rounds of new tasks may run (0: none; the answer
	// is written from what there is).
	RoundsLeft int
	// MaxTasks is the most new tasks one round may add.
	MaxTasks int
	// ToolName is the commit function (commit_reflection).
	ToolName string
}

// PlannerAnswerData is the data of the PlannerAnswer template.
type PlannerAnswerData struct {
	// Request is the person's request; Intent is what the person wants.
	Request string
	Intent  string
	// Results are every task's result, in the order the tasks were planned.
	Results []TaskResult
	// Missing is what the last reflection found still missing ("" when nothing, or
	// when there was no reflection).
	Missing string
}

// PlannerRouteData is the data of the PlannerRoute template.
type PlannerRouteData struct {
	// ToolName is the function the router must call (commit_route).
	ToolName string
}

// PlannerRouteRequestData is the data of the PlannerRouteRequest template.
type PlannerRouteRequestData struct {
	// Recent is the tail of the conversation before the request, oldest first.
	Recent []Turn
	// Text is the request to judge.
	Text string
}
