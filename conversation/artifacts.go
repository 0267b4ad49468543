package conversation

import (
	"context"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// Selection is what a person's reply to an options message means.
type Selection struct {
	// Label is the option chosen ("" when the reply chose none).
	Label string
	// Instructions are changes asked for with the choice ("B, but shorter" →
	// "shorter").
	Instructions string
	// Regenerate is true when the reply asks for new options instead.
	Regenerate bool
}

// ArtifactRequest is what a workflow agent is given to work on one artifact.
type ArtifactRequest struct {
	Workflow *workflow.Definition
	Artifact *workflow.Artifact
	// Locale is the language to write in, as a BCP 47 tag ("en", "ru").
	Locale string
	// Inputs are the values of the workflow's inputs (workflow.State.Inputs).
	Inputs map[string]string
	// Approved holds the texts of the workflow's approved artifacts (id → text), in
	// particular those this one depends on.
	Approved map[string]string
	// Options are the artifact's current options; Selected the chosen one, if any.
	Options  []workflow.Option
	Selected *workflow.Option
	// Review, when set, are the options just proposed, for the model to review
	// against the artifact's criteria and revise once (workflow.Artifact.SelfReview):
	// ProposeOptions then returns the revised options.
	Review []workflow.Option
	// Current is the artifact's current text (for a revision).
	Current string
	// Instructions are a person's edit request or guidance ("" when none).
	Instructions string
	// History is the recent conversation in the thread, oldest first, and Summary
	// condenses what came before it.
	History []Message
	Summary string
	// Item is the item this request writes, for a foreach artifact (nil: the whole
	// artifact).
	Item *Item
	// Batch lists the items one write covers, for a research_strategy: batch
	// artifact (Item is nil then): the text has one "## " section per item, titled
	// as the item (docs/workflows.md, "Pipelines"). Nil for any other request.
	Batch []Item
	// Profile names the model profile to use (MODEL_PROFILES; "" is the main model):
	// the artifact's Model, or its editor's for the editor pass.
	Profile string
	// ChannelID is the channel of the workflow's thread: its tool allowlist
	// (TOOL_POLICY) narrows the artifact's tools.
	ChannelID string
	// Tainted says untrusted content is in what the request gives the model (an
	// approved text, or Current, that workflow.State.ReadsTainted finds tainted): its
	// writer runs no tool with side effects (docs/tools.md, "Tool policy").
	Tainted bool
	// Ask says a person can confirm the write's tool calls (an artifact people
	// review, written for a person's action): a call that needs confirmation stops
	// the write with a *ConfirmationNeeded rather than being refused. Resume, when
	// set, goes on from such a stop, the call run or denied as it says.
	Ask    bool
	Resume *Resume
}

// ConfirmationNeeded is the error of a WorkflowAgent.Write with ArtifactRequest.Ask
// that stopped before a tool call that needs a person's confirmation: nothing was
// saved, and Pending (with the writer's transcript) is what the write resumes from
// (ArtifactRequest.Resume) once the person decides.
type ConfirmationNeeded struct {
	Pending PendingTool
}

func (e *ConfirmationNeeded) Error() string {
	return "the write waits for a person's confirmation of " + e.Pending.Name
}

// Item is one item of a foreach artifact: a section of the earlier artifact it fans
// out over (workflow.Items).
type Item struct {
	// Index is the item's 0-based position; Total the number of items.
	Index int
	Total int
	// Title is the item's heading or list entry; Brief the text under it ("" when
	// none).
	Title string
	Brief string
}

// TaskFailure is the error of a write the model reported it could not do (it called
// commit_artifact_final_text with "failure" set: for research, nothing relevant was
// found). The pipeline retries such an item like any other failure.
type TaskFailure struct {
	// Reason is the model's explanation.
	Reason string
	// Tools are the tools whose calls failed in the write, in order, each once: the
	// model gave up after them, so the failure message names the first.
	Tools []string
}

func (e *TaskFailure) Error() string { return "the model could not do the task: " + e.Reason }

// UserMessage is the reason, for the thread.
func (e *TaskFailure) UserMessage() string { return e.Reason }

// WorkflowAgent writes and judges artifacts (implemented by agents). The model writes
// plain text and persists it by calling a commit tool (commit_artifact_options,
// commit_artifact_selection, commit_artifact_final_text, commit_final_docset); a
// model that answers without calling it is reminded a bounded number of times, then
// the method fails with an error whose UserMessage says nothing was saved.
type WorkflowAgent interface {
	// ProposeOptions proposes Artifact.Options options (commit_artifact_options).
	ProposeOptions(ctx context.Context, r ArtifactRequest) ([]workflow.Option, Usage, error)
	// InterpretReply reads a person's reply to an options message
	// (commit_artifact_selection).
	InterpretReply(ctx context.Context, r ArtifactRequest, reply string) (Selection, Usage, error)
	// ClassifyReview reads a typed reply to r.Current, under review, that the phrase
	// list (workflow.ClassifyReply) did not decide: approve, change, question or
	// ambiguous, with the small model (docs/workflows.md, "Typed decisions").
	ClassifyReview(ctx context.Context, r ArtifactRequest, reply string) (ReviewReading, Usage, error)
	// Write writes the artifact from r.Selected (choice) or from scratch
	// (commit_artifact_final_text).
	Write(ctx context.Context, r ArtifactRequest) (string, Usage, error)
	// Revise rewrites r.Current following r.Instructions: the editor agent
	// (commit_artifact_final_text).
	Revise(ctx context.Context, r ArtifactRequest) (string, Usage, error)
	// Evaluate judges text against r.Artifact.Criteria, one result per criterion.
	Evaluate(ctx context.Context, r ArtifactRequest, text string) ([]workflow.CriterionResult, Usage, error)
	// Summarize writes the short summary posted with the final report
	// (commit_final_docset).
	Summarize(ctx context.Context, r ArtifactRequest) (string, Usage, error)
	// Recover looks at failures, the errors of r.Item's failed tries (oldest first),
	// and rewrites its instructions for the last retry (commit_recovery_plan).
	Recover(ctx context.Context, r ArtifactRequest, failures []string) (workflow.Recovery, Usage, error)
}

// RoleRevision marks a stored message that records an artifact revision: its Text
// is the artifact's text, its Meta the workflow.Revision as JSON.
const RoleRevision Role = "revision"

// Workflows is the set of workflows a Service offers (workflow.Set implements it).
type Workflows interface {
	// Get returns the workflow named name.
	Get(name string) (*workflow.Definition, bool)
	// All returns every workflow, sorted by name; Names their names.
	All() []*workflow.Definition
	Names() []string
}

// SourceFetcher fetches a web page for the sources phase: its readable text
// (implemented by agents, with fetch_url's address guard and limits). Errors say why
// the page could not be read ("HTTP 500", an address refused, a timeout); they are
// recorded in the artifact's text, scrubbed and on one line.
type SourceFetcher interface {
	FetchSource(ctx context.Context, url string) (SourcePage, error)
}

// SourcePage is a fetched page: the URL fetched, the page's title ("" when it has
// none) and its readable text. (Source, a task's source, is another thing.)
type SourcePage struct {
	URL, Title, Text string
}

// ReviewReading is what a typed reply to an artifact under review asks for.
type ReviewReading struct {
	// Decision is workflow.DecisionApprove, DecisionChange, DecisionQuestion or
	// DecisionAmbiguous.
	Decision workflow.Decision
	// Confidence is the model's, from 0 to 1.
	Confidence float64
}

// MinReviewConfidence is the least confidence (0 to 1) at which the model's reading of
// a typed reply is acted on; below it the person is asked.
const MinReviewConfidence = 0.6

// CriterionPlaceholders is the criterion every written artifact is checked against
// without a model: no template slot such as "[product]" is left in its text.
const CriterionPlaceholders = "no_placeholders"
