package workflow

import (
	"encoding/json"
	"maps"
	"slices"
	"time"
)

// ArtifactStatus is where an artifact is in its state machine (docs/architecture.md,
// "Workflow machine"): pending → options_generated → option_selected → generated →
// approved for a choice artifact (a draft skips the options), pending → running →
// approved for an auto artifact, and stale when an artifact it depends on changed
// after it was written.
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

// RunStatus is the state of a workflow run.
type RunStatus string

// The run statuses.
const (
	RunRunning   RunStatus = "running"
	RunCompleted RunStatus = "completed"
	RunCancelled RunStatus = "cancelled"
)

// State is a workflow run, as a conversation's checkpoint keeps it: small,
// structured, and the source of truth for artifact texts and selections (a
// conversation's summary never has to carry them). It is stored as JSON.
type State struct {
	Name      string                    `json:"name"`
	StartedBy string                    `json:"started_by"`
	Locale    string                    `json:"locale"`
	Status    RunStatus                 `json:"status"`
	Artifacts map[string]*ArtifactState `json:"artifacts"`
	// Inputs are the values of the workflow's inputs (id → value), filled when it
	// started (Definition.FillInputs).
	Inputs map[string]string `json:"inputs,omitempty"`
	// TopicFrom is the Slack user id of the earlier message of the thread whose
	// stated subject (StatedSubject) filled the topic, for a start that gave none;
	// "" when the start gave it, or nothing did.
	TopicFrom string `json:"topic_from,omitempty"`
	// TopicHeld is true while the run waits, before its first artifact is produced,
	// for a person to keep the topic taken from an earlier message (TopicFrom) or
	// change it (docs/workflows.md, "Workflows"); TopicTS is then the start card that
	// asks, whose buttons decide.
	TopicHeld bool   `json:"topic_held,omitempty"`
	TopicTS   string `json:"topic_ts,omitempty"`
	// InputsTS is the ts of the message that asks for the inputs still missing
	// ("" when none is asked for).
	InputsTS string `json:"inputs_ts,omitempty"`
	// ReportTS is the ts of the message that carries the uploaded report.
	ReportTS string `json:"report_ts,omitempty"`
	// Pipeline is the running pipeline, if any.
	Pipeline *PipelineState `json:"pipeline,omitempty"`
	// Stale is the stale list of the last change, shown once the artifact that
	// changed is approved again.
	Stale *StaleList `json:"stale,omitempty"`
}

// Clone returns a deep copy of s, so that a step that fails leaves s as it was.
func (s *State) Clone() *State {
	if s == nil {
		return nil
	}
	c := *s
	c.Inputs = maps.Clone(s.Inputs)
	c.Artifacts = make(map[string]*ArtifactState, len(s.Artifacts))
	for id, a := range s.Artifacts {
		ac := *a
		ac.Options = slices.Clone(a.Options)
		ac.Eval = slices.Clone(a.Eval)
		ac.PriorEval = slices.Clone(a.PriorEval)
		ac.Items = slices.Clone(a.Items)
		ac.Refused = slices.Clone(a.Refused)
		for i := range ac.Items {
			ac.Items[i].Failures = slices.Clone(ac.Items[i].Failures)
		}
		c.Artifacts[id] = &ac
	}
	if p := s.Pipeline; p != nil {
		pc := *p
		pc.Artifacts = slices.Clone(p.Artifacts)
		c.Pipeline = &pc
	}
	if l := s.Stale; l != nil {
		lc := *l
		lc.Rows = slices.Clone(l.Rows)
		c.Stale = &lc
	}
	return &c
}

// artifact returns artifact id of s with its definition in d, checking that d has
// it and, when statuses are given, that it is in one of them. Errors: a Refusal,
// UnknownArtifact or NotCurrent.
func (s *State) artifact(d *Definition, id string, statuses ...ArtifactStatus) (*Artifact, *ArtifactState, error) {
	a, ok := d.Artifact(id)
	st := s.Artifacts[id]
	if !ok || st == nil {
		return nil, nil, &Refusal{Reason: UnknownArtifact, Artifact: id}
	}
	if len(statuses) > 0 && !slices.Contains(statuses, st.Status) {
		return nil, nil, &Refusal{Reason: NotCurrent, Artifact: id}
	}
	return a, st, nil
}

// ArtifactState is one artifact of a run.
type ArtifactState struct {
	Status ArtifactStatus `json:"status"`
	// Rev increases with every change of this artifact; buttons carry the Rev they
	// were drawn for, and a click of another Rev is out of date.
	Rev      int               `json:"rev"`
	Options  []Option          `json:"options,omitempty"`
	Selected string            `json:"selected,omitempty"`
	Text     string            `json:"text,omitempty"`
	Eval     []CriterionResult `json:"eval,omitempty"`
	// PriorEval is the evaluation of the text the automatic revision replaced (its
	// verdict failed: Definition.Judge), so the card shows both verdicts; nil when no
	// automatic revision made Text. Every new text clears it.
	PriorEval []CriterionResult `json:"prior_eval,omitempty"`
	// Note is what the editor said about the text's last revision ("Revised as
	// asked: make it shorter."), one note a line, or "": shown on the artifact's card,
	// never part of Text, which prompts, the edit modal, the report and the API read
	// (SplitNotes).
	Note string `json:"note,omitempty"`
	// Reviewed is true when the model reviewed Options against the criteria and
	// revised them once (Artifact.SelfReview); the options card says so.
	Reviewed bool `json:"reviewed,omitempty"`
	// Enhancement is what became of Text's enhancement pass (Artifact.Enhance), for
	// its card: EnhanceDone, EnhanceSkipped, EnhanceFailed, or "" when none was tried.
	Enhancement string `json:"enhancement,omitempty"`
	// Revisions counts the kept revisions of the text.
	Revisions int `json:"revisions,omitempty"`
	// MessageTS is the ts of the message that shows the artifact now (its options,
	// or its text for review), whose buttons act on it.
	MessageTS string `json:"message_ts,omitempty"`
	// StaleBecause names the artifact whose change made this one stale.
	StaleBecause string `json:"stale_because,omitempty"`
	// Items are the results of an auto artifact's items, in order (kept after it is
	// approved, as the record of the run).
	Items []ItemState `json:"items,omitempty"`
	// Instructions are the guidance of a regeneration of an auto artifact, given to
	// each of its items.
	Instructions string `json:"instructions,omitempty"`
	// Batched is true once the batch write of a research_strategy: batch artifact
	// ended (Pipeline.BatchEnded): its items still pending are written one by one.
	Batched bool `json:"batched,omitempty"`
	// Tainted is true once untrusted content went into Text: a fetched page, an
	// untrusted tool's output, or a tainted artifact it was written from
	// (docs/tools.md, "Tool policy"). What is written from it is tainted too
	// (State.ReadsTainted); it stays set until the artifact runs again.
	Tainted bool `json:"tainted,omitempty"`
	// Refused are the tool calls the writes of Text did not run because they needed
	// a person's confirmation that nobody could give there; its card says so.
	Refused []RefusedCall `json:"refused,omitempty"`
	// Asking is true while the write of this artifact, one people review, waits for
	// a person's confirmation of a tool call (conversation.State.WriteApproval): the
	// scheduling rule (Next) does not write it again meanwhile.
	Asking bool `json:"asking,omitempty"`
}

// RefusedCall is a tool call a write did not run because it needed a person's
// confirmation and nobody could give it there (conversation.Taint).
type RefusedCall struct {
	// Tool is the tool's name (OpenAI's function.name).
	Tool string `json:"tool"`
	// Reason is why it needed confirmation: "after_untrusted_content" (untrusted
	// content went into the write) or "destructive" (conversation.PendingTool.Reason).
	Reason string `json:"reason"`
}

// Taint records what one write of a's text, or of one of its items, reported: read
// says untrusted content went into it; refused are the calls it did not run (each
// recorded once).
func (a *ArtifactState) Taint(read bool, refused []RefusedCall) {
	a.Tainted = a.Tainted || read
	for _, c := range refused {
		if !slices.Contains(a.Refused, c) {
			a.Refused = append(a.Refused, c)
		}
	}
}

// ReadsTainted reports whether a write of artifact id reads untrusted content: an
// approved artifact's text it is given (every approved text is in its prompt) is
// tainted, or its own current text is.
func (s *State) ReadsTainted(id string) bool {
	for aid, a := range s.Artifacts {
		if a.Tainted && (aid == id || a.Status == StatusApproved) {
			return true
		}
	}
	return false
}

// touch marks a change of a: buttons drawn before it are out of date.
func (a *ArtifactState) touch() { a.Rev++ }

// UnmarshalJSON reads an artifact's state from a checkpoint. A checkpoint written
// before notes were kept apart may have a note in Text: it is moved to Note.
func (a *ArtifactState) UnmarshalJSON(b []byte) error {
	type plain ArtifactState // without this method
	if err := json.Unmarshal(b, (*plain)(a)); err != nil {
		return err
	}
	if text, note := SplitNotes(a.Text); note != "" {
		a.Text = text
		if a.Note == "" {
			a.Note = note
		}
	}
	return nil
}

// StaleList is the list of artifacts a change made stale, each with Keep and
// Regenerate with guidance until it is handled.
type StaleList struct {
	// Changed is the artifact whose change made the others stale.
	Changed string `json:"changed"`
	// Shown is false until Changed is approved again: until then the rows would
	// offer to keep artifacts written from a text that does not exist yet.
	Shown bool `json:"shown,omitempty"`
	// TS is the list's message, once shown.
	TS string `json:"ts,omitempty"`
	// Replaces is the message of the list this one replaced (a newer change came
	// before every row of it was handled), to be closed.
	Replaces string     `json:"replaces,omitempty"`
	Rows     []StaleRow `json:"rows"`
}

// StaleRow is one artifact of a StaleList.
type StaleRow struct {
	Artifact string `json:"artifact"`
	// Done is how it was handled ("" while it is stale): StaleKept or
	// StaleRegenerated; By is who did it.
	Done string `json:"done,omitempty"`
	By   string `json:"by,omitempty"`
}

// How a stale artifact was handled (StaleRow.Done).
const (
	StaleKept        = "kept"
	StaleRegenerated = "regenerated"
)

// Open reports whether the list has rows still to handle.
func (l *StaleList) Open() bool {
	if l == nil {
		return false
	}
	for _, r := range l.Rows {
		if r.Done == "" {
			return true
		}
	}
	return false
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
	// Note is what the editor said about the result, kept apart from Text as an
	// artifact's Note is (SplitNotes).
	Note string `json:"note,omitempty"`
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
	// Interrupted counts runs cut short by the end of a turn rather than by a
	// failure; an item interrupted MaxInterruptions times fails.
	Interrupted int `json:"interrupted,omitempty"`
}

// UnmarshalJSON reads an item from a checkpoint, moving a note an older checkpoint
// kept in Text to Note (see ArtifactState.UnmarshalJSON).
func (it *ItemState) UnmarshalJSON(b []byte) error {
	type plain ItemState // without this method
	if err := json.Unmarshal(b, (*plain)(it)); err != nil {
		return err
	}
	if text, note := SplitNotes(it.Text); note != "" {
		it.Text = text
		if it.Note == "" {
			it.Note = note
		}
	}
	return nil
}

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

// PipelineState is a running pipeline: the auto artifacts being written (those with
// StatusRunning) and its progress message (docs/architecture.md, "Pipelines").
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

// Stopped reports whether the pipeline waits for Continue.
func (p *PipelineState) Stopped() bool { return p.StoppedBy != "" || p.Halted != "" }

// Revision is one kept version of an artifact (the audit trail): what changed, who
// caused it and why. The conversation stores it as a message whose text is the
// artifact's text.
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
