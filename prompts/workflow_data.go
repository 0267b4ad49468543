package prompts

// The names of the artifact-workflow templates (docs/architecture.md, "Workflow
// machine"), for Set.Render. The workflow agent (agents.WorkflowAgent) sends
// WorkflowSystem as the system prompt and one task template as the user message; each
// task ends by asking the model to call a commit function, and CommitReminder asks
// again when it did not.
const (
	// WorkflowSystem is the workflow agent's system prompt: the workflow, the artifact,
	// the approved artifacts, the language, the format and the commit function; data:
	// WorkflowSystemData.
	WorkflowSystem = "workflow_system"
	// ArtifactOptions asks for a choice artifact's options; data: ArtifactOptionsData.
	ArtifactOptions = "artifact_options"
	// ArtifactSelection asks what a person's reply to an options message means; data:
	// ArtifactSelectionData.
	ArtifactSelection = "artifact_selection"
	// ArtifactWrite asks for an artifact's text; data: ArtifactWriteData.
	ArtifactWrite = "artifact_write"
	// ArtifactRevise asks the editor to revise an artifact's text; data:
	// ArtifactReviseData.
	ArtifactRevise = "artifact_revise"
	// ArtifactEvaluate asks for a judgement of a text against criteria; data:
	// ArtifactEvaluateData.
	ArtifactEvaluate = "artifact_evaluate"
	// DocsetSummary asks for the summary posted with the final report; data:
	// DocsetSummaryData.
	DocsetSummary = "docset_summary"
	// CommitReminder tells the model that nothing was saved and asks it to call the
	// commit function; data: CommitReminderData.
	CommitReminder = "commit_reminder"
	// RecoveryPlan asks the recovery agent for new instructions for an item (or an
	// artifact) whose tries failed; data: RecoveryPlanData.
	RecoveryPlan = "recovery_plan"
)

// WorkflowSystemData is the data of the WorkflowSystem template.
type WorkflowSystemData struct {
	Workflow WorkflowInfo
	// Artifact is the artifact being worked on; nil for a task about the whole
	// workflow (the final summary).
	Artifact *ArtifactInfo
	// Dependencies are the approved artifacts the task builds on, in the workflow's
	// order, with their full text: those Artifact depends on, or every approved
	// artifact for a task about the whole workflow.
	Dependencies []ArtifactText
	// Others are the other approved artifacts, with an excerpt of their text, so the
	// model stays consistent with them.
	Others []ArtifactText
	// Language is the language to write in, in English, e.g. "Russian (русский)";
	// empty: the language of the people in the thread.
	Language string
	// Summary condenses the thread's earlier conversation, when there is one.
	Summary string
	// History is the recent conversation in the thread, oldest first (Role "user" or
	// "assistant"), each text shortened.
	History []Turn
	// ToolName is the commit function that saves the task's result.
	ToolName string
}

// WorkflowInfo describes a workflow to the model.
type WorkflowInfo struct {
	Title       string
	Description string
	// Inputs are what the person who started the workflow asked for, in the
	// workflow's order; only those filled.
	Inputs []Input
}

// Input is one filled input of a workflow: its label (the question) and the answer.
type Input struct {
	ID    string
	Label string
	Value string
}

// ArtifactInfo describes an artifact to the model.
type ArtifactInfo struct {
	ID          string
	Title       string
	Description string
	// Mode is "choice", "draft" or "auto".
	Mode string
	// Guidance is the workflow author's extra guidance for this artifact (its prompt).
	Guidance string
	// Criteria are what the written text is judged against.
	Criteria []Criterion
}

// Criterion is one evaluation criterion of an artifact.
type Criterion struct {
	ID          string
	Description string
	// Critical marks a criterion that must pass for the evaluation's verdict to pass
	// (workflow.Criterion.Critical).
	Critical bool
}

// ArtifactText is an approved artifact and its text (or an excerpt of it).
type ArtifactText struct {
	ID    string
	Title string
	Text  string
}

// Option is one option of a choice artifact.
type Option struct {
	// Label is "A", "B", …
	Label string
	Title string
	Text  string
}

// ArtifactOptionsData is the data of the ArtifactOptions template.
type ArtifactOptionsData struct {
	// Title is the artifact's title.
	Title string
	// Count is how many options to propose, and Labels their labels ("A", "B", …).
	Count  int
	Labels []string
	// Instructions are the team's guidance for the new options ("" when none).
	Instructions string
	// Previous are options proposed before, to propose different ones (none the first
	// time).
	Previous []Option
	// Review, when set, are the options just proposed, to review against Criteria
	// and revise once (a choice artifact's self_review; docs/workflows.md, "Pipelines").
	Review   []Option
	Criteria []Criterion
	// ToolName is the commit function (commit_artifact_options).
	ToolName string
}

// ArtifactSelectionData is the data of the ArtifactSelection template.
type ArtifactSelectionData struct {
	// Title is the artifact's title.
	Title string
	// Options are the options the reply answers, and Labels their labels.
	Options []Option
	Labels  []string
	// Reply is the person's reply, as typed.
	Reply string
	// ToolName is the commit function (commit_artifact_selection).
	ToolName string
}

// Item is one item of a foreach artifact, which is written one item at a time. The
// templates show it as the line "Item <Number> of <Total>: <Title>" (the offline demo
// model reads that line), followed by the brief.
type Item struct {
	// Number is the item's 1-based position; Total the number of items.
	Number, Total int
	// Title is the item's heading or list entry, one line; Brief the text under it
	// ("" when none).
	Title string
	Brief string
}

// ArtifactWriteData is the data of the ArtifactWrite template.
type ArtifactWriteData struct {
	// Title is the artifact's title.
	Title string
	// Item is the item to write, for a foreach artifact: the text saved is that
	// item's part only, without its heading. Nil: the whole artifact.
	Item *Item
	// Batch lists the items one write covers (research_strategy: batch), Item nil:
	// the text has one "## " section per item, titled as listed. Nil otherwise.
	Batch []Item
	// Selected is the chosen option of a choice artifact; nil for a draft or auto one.
	Selected *Option
	// Searched lists the search queries the item's brief lists (approved with the
	// plan), already run with the search tools before the model is called: their
	// results follow the user message. Nil: none were.
	Searched []string
	// Previous is an earlier text of the artifact, when there is one (regenerating a
	// stale artifact, or writing again from a new choice).
	Previous string
	// Instructions are the team's instructions or guidance, or a recovery's new
	// instructions for an item ("" when none).
	Instructions string
	// Tools are the tools the model may call before it saves (the artifact's tools
	// the deployment has); empty: none.
	Tools []Tool
	// Unavailable are the tools the artifact names that the deployment does not
	// have or the channel does not allow, by name; empty: none.
	Unavailable []string
	// Failure is true when the commit function has a "failure" argument the model
	// may set, with "text" empty, when the task cannot be done (automated writes).
	Failure bool
	// ToolName is the commit function (commit_artifact_final_text).
	ToolName string
}

// ArtifactReviseData is the data of the ArtifactRevise template.
type ArtifactReviseData struct {
	// Title is the artifact's title.
	Title string
	// Item is the item whose text is revised, for a foreach artifact; nil: the whole
	// artifact.
	Item *Item
	// Current is the text to revise.
	Current string
	// Instructions are the change request, or the editor pass's prompt ("" when
	// none: a general improvement).
	Instructions string
	// Failure is as in ArtifactWriteData.
	Failure bool
	// ToolName is the commit function (commit_artifact_final_text).
	ToolName string
}

// ArtifactEvaluateData is the data of the ArtifactEvaluate template.
type ArtifactEvaluateData struct {
	// Title is the artifact's title.
	Title string
	// Criteria are what to judge the text against.
	Criteria []Criterion
	// Text is the text to judge.
	Text string
	// ToolName is the commit function (commit_evaluation).
	ToolName string
}

// DocsetSummaryData is the data of the DocsetSummary template.
type DocsetSummaryData struct {
	// Title is the workflow's title.
	Title string
	// Instructions are the team's instructions ("" when none).
	Instructions string
	// ToolName is the commit function (commit_final_docset).
	ToolName string
}

// CommitReminderData is the data of the CommitReminder template.
type CommitReminderData struct {
	// ToolName is the commit function the model must call.
	ToolName string
	// Problem says why the last answer was not saved, as a clause that reads after
	// "That was not saved:" (e.g. `it has 2 options; exactly 3 are needed`); empty
	// when the model answered without calling ToolName at all.
	Problem string
	// Try is the number of the coming try, from 2, and Tries the number of tries in
	// all.
	Try, Tries int
}

// RecoveryPlanData is the data of the RecoveryPlan template.
type RecoveryPlanData struct {
	// Title is the artifact's title.
	Title string
	// Item is the failing item; nil when the whole artifact failed.
	Item *Item
	// Instructions are the instructions the failed tries were given ("" when none:
	// the item's brief and the artifact's guidance only).
	Instructions string
	// Failures are the failed tries' errors, oldest first, each one line and
	// shortened; Omitted counts older ones left out.
	Failures []string
	Omitted  int
	// Tools are the tools the writer may call on the next try; empty: none.
	Tools []Tool
	// ToolName is the commit function (commit_recovery_plan).
	ToolName string
}
