package conversation

import (
	"context"
	"time"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// ArtifactStatus is where an artifact is in its state machine (DESIGN.md, "Artifact
// workflows"): pending → options_generated → option_selected → generated → approved,
// and stale when an artifact it depends on changed after it was written.
type ArtifactStatus string

// The artifact statuses.
const (
	StatusPending          ArtifactStatus = "pending"
	StatusOptionsGenerated ArtifactStatus = "options_generated"
	StatusOptionSelected   ArtifactStatus = "option_selected"
	StatusGenerated        ArtifactStatus = "generated"
	StatusApproved         ArtifactStatus = "approved"
	StatusStale            ArtifactStatus = "stale"
	// StatusRunning: an auto artifact being written by the pipeline, item by item
	// (ArtifactState.Items); approved when every item has finished.
	StatusRunning ArtifactStatus = "running"
)

// ItemStatus is where one item of a running auto artifact is.
type ItemStatus string

// The item statuses.
const (
	ItemPending ItemStatus = "pending"
	ItemDone    ItemStatus = "done"
	// ItemFailed: every try failed; the item's result is empty and Reason says why.
	ItemFailed ItemStatus = "failed"
)

// ItemState is one item of an auto artifact (one per item of its foreach artifact, or
// a single item for the whole artifact), checkpointed as soon as it finishes so that
// a restarted pipeline never writes it again.
type ItemState struct {
	Title  string     `json:"title"`
	Brief  string     `json:"brief,omitempty"`
	Status ItemStatus `json:"status"`
	// Text is the item's result (done items).
	Text string `json:"text,omitempty"`
	// Reason says why the item failed: its last try's error.
	Reason string `json:"reason,omitempty"`
	// Attempts is how many tries it has had (1 + retries used), checkpointed after
	// each failed try, so a run cut short goes on with the next try.
	Attempts int `json:"attempts,omitempty"`
	// Failures are the reasons of its failed tries, oldest first (what the recovery
	// agent reads).
	Failures []string `json:"failures,omitempty"`
	// Recovery is the recovery agent's rewrite used for the last try, if any.
	Recovery *Recovery `json:"recovery,omitempty"`
	// Interrupted counts runs cut short by the end of a turn (TurnTimeout) rather than
	// by a failure; an item interrupted maxInterruptions times fails.
	Interrupted int `json:"interrupted,omitempty"`
}

// Stopped reports whether the pipeline waits for Continue.
func (p *PipelineState) Stopped() bool { return p.StoppedBy != "" || p.Halted != "" }

// PipelineState is a running pipeline's part of a workflow's checkpoint: the auto
// artifacts being written (those with StatusRunning) and its progress message.
type PipelineState struct {
	// ID names the run; the progress message's Stop and Continue buttons carry it.
	ID        string    `json:"id"`
	StartedAt time.Time `json:"started_at"`
	// ProgressTS is the ts of the progress message, updated in place.
	ProgressTS string `json:"progress_ts,omitempty"`
	// StoppedBy is the Slack user who stopped it: the unfinished items wait for
	// Continue (or a restart).
	StoppedBy string `json:"stopped_by,omitempty"`
	// Halted, when set, says why the bot stopped it itself (its turns kept failing);
	// like a person's Stop, the unfinished items wait for Continue.
	Halted string `json:"halted,omitempty"`
	// Part counts the pipeline inputs enqueued for this run (their ids differ by it).
	Part int `json:"part"`
	// Artifacts are the ids of the artifacts the run has started, in order, for its
	// progress message.
	Artifacts []string `json:"artifacts,omitempty"`
}

// Option is one option proposed for a choice artifact.
type Option struct {
	// Label is the option's short label: "A", "B", "C", …
	Label string `json:"label"`
	// Title is a few words naming the option.
	Title string `json:"title"`
	// Text is the option itself.
	Text string `json:"text"`
}

// CriterionResult is the evaluation of an artifact's text against one criterion.
type CriterionResult struct {
	ID     string `json:"id"`
	Pass   bool   `json:"pass"`
	Reason string `json:"reason"`
}

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
	// Approved holds the texts of the workflow's approved artifacts (id → text), in
	// particular those this one depends on.
	Approved map[string]string
	// Options are the artifact's current options; Selected the chosen one, if any.
	Options  []Option
	Selected *Option
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
	// Profile names the model profile to use (MODEL_PROFILES; "" is the main model):
	// the artifact's Model, or its editor's for the editor pass.
	Profile string
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
}

func (e *TaskFailure) Error() string { return "the model could not do the task: " + e.Reason }

// UserMessage is the reason, for the thread.
func (e *TaskFailure) UserMessage() string { return e.Reason }

// Recovery is the recovery agent's rewrite of a failing item's instructions, used
// for its last retry.
type Recovery struct {
	// Instructions are the new instructions for the item.
	Instructions string `json:"instructions"`
	// Queries are new, more specific search queries (research items); may be empty.
	Queries []string `json:"queries,omitempty"`
	// Rationale says why the new instructions should work where the old failed.
	Rationale string `json:"rationale"`
}

// WorkflowAgent writes and judges artifacts (implemented by agents). The model writes
// plain text and persists it by calling a commit tool (commit_artifact_options,
// commit_artifact_selection, commit_artifact_final_text, commit_final_docset); a
// model that answers without calling it is reminded a bounded number of times, then
// the method fails with an error whose UserMessage says nothing was saved.
type WorkflowAgent interface {
	// ProposeOptions proposes Artifact.Options options (commit_artifact_options).
	ProposeOptions(ctx context.Context, r ArtifactRequest) ([]Option, Usage, error)
	// InterpretReply reads a person's reply to an options message
	// (commit_artifact_selection).
	InterpretReply(ctx context.Context, r ArtifactRequest, reply string) (Selection, Usage, error)
	// Write writes the artifact from r.Selected (choice) or from scratch
	// (commit_artifact_final_text).
	Write(ctx context.Context, r ArtifactRequest) (string, Usage, error)
	// Revise rewrites r.Current following r.Instructions: the editor agent
	// (commit_artifact_final_text).
	Revise(ctx context.Context, r ArtifactRequest) (string, Usage, error)
	// Evaluate judges text against r.Artifact.Criteria, one result per criterion.
	Evaluate(ctx context.Context, r ArtifactRequest, text string) ([]CriterionResult, Usage, error)
	// Summarize writes the short summary posted with the final report
	// (commit_final_docset).
	Summarize(ctx context.Context, r ArtifactRequest) (string, Usage, error)
	// Recover looks at failures, the errors of r.Item's failed tries (oldest first),
	// and rewrites its instructions for the last retry (commit_recovery_plan).
	Recover(ctx context.Context, r ArtifactRequest, failures []string) (Recovery, Usage, error)
}

// Revision is one kept version of an artifact, stored as a message of role
// RoleRevision (its Text is the artifact text, its Meta the revision's JSON).
type Revision struct {
	Artifact string         `json:"artifact"`
	Number   int            `json:"number"`
	Status   ArtifactStatus `json:"status"`
	// By is the Slack user whose action caused it ("" for the bot on its own).
	By string `json:"by,omitempty"`
	// Why says what happened: "written from option B", "edited: shorter", "kept".
	Why string    `json:"why"`
	At  time.Time `json:"at"`
}

// RoleRevision marks a stored message that records an artifact revision.
const RoleRevision Role = "revision"

// ArtifactState is one artifact's part of a workflow's checkpoint.
type ArtifactState struct {
	Status ArtifactStatus `json:"status"`
	// Rev increases with every change of this artifact; buttons carry the Rev they
	// were drawn for (Action.Rev).
	Rev      int               `json:"rev"`
	Options  []Option          `json:"options,omitempty"`
	Selected string            `json:"selected,omitempty"`
	Text     string            `json:"text,omitempty"`
	Eval     []CriterionResult `json:"eval,omitempty"`
	// Revisions counts the kept revisions of the text.
	Revisions int `json:"revisions,omitempty"`
	// MessageTS is the ts of the message that shows the artifact now.
	MessageTS string `json:"message_ts,omitempty"`
	// StaleBecause names the artifact whose change made this one stale.
	StaleBecause string `json:"stale_because,omitempty"`
	// Items are the results of an auto artifact's items, in order (kept after it is
	// approved, as the record of the run).
	Items []ItemState `json:"items,omitempty"`
	// Instructions are the guidance of a regeneration of an auto artifact, given to
	// each of its items.
	Instructions string `json:"instructions,omitempty"`
}

// WorkflowStatus is the state of a workflow run.
type WorkflowStatus string

// The workflow statuses.
const (
	WorkflowRunning   WorkflowStatus = "running"
	WorkflowCompleted WorkflowStatus = "completed"
	WorkflowCancelled WorkflowStatus = "cancelled"
)

// WorkflowState is a workflow run's part of a conversation's checkpoint: small,
// structured, and the source of truth for artifact texts and selections (the
// conversation's summary never has to carry them).
type WorkflowState struct {
	Name      string                    `json:"name"`
	StartedBy string                    `json:"started_by"`
	Locale    string                    `json:"locale"`
	Status    WorkflowStatus            `json:"status"`
	Artifacts map[string]*ArtifactState `json:"artifacts"`
	// ReportTS is the ts of the message that carries the uploaded report.
	ReportTS string `json:"report_ts,omitempty"`
	// Pipeline is the running pipeline, if any.
	Pipeline *PipelineState `json:"pipeline,omitempty"`
}
