package workflow

// Refusal is a transition the machine refused: the click is out of date, the
// artifact is not where the action applies, or the person may not do it. Reason
// says which; the caller tells the person in their language.
type Refusal struct {
	Reason RefusalReason
	// Artifact is the artifact concerned, when there is one; Source, for NoItems and
	// TooManyItems, the artifact whose text it fans out over.
	Artifact, Source string
	// Action, for NotAllowed, is what the person may not do; Approvers are the Slack
	// users who may (when set by the deployment), and StartedBy the starter who may
	// ("" when the starter may not).
	Action    Permission
	Approvers []string
	StartedBy string
}

// RefusalReason names why a transition was refused.
type RefusalReason string

// The reasons of a Refusal.
const (
	// NotCurrent: the button was drawn for an earlier revision, or the artifact is
	// no longer where the action applies.
	NotCurrent RefusalReason = "not_current"
	// NotAllowed: the person may not do Refusal.Action (Refusal.Approvers or
	// StartedBy may).
	NotAllowed RefusalReason = "not_allowed"
	// NotRunning: the run is not running (completed or cancelled).
	NotRunning RefusalReason = "not_running"
	// AlreadyRunning: a run is under way in the thread.
	AlreadyRunning RefusalReason = "already_running"
	// UnknownArtifact: the definition has no such artifact.
	UnknownArtifact RefusalReason = "unknown_artifact"
	// NoSuchOption: the reply chose no option of the artifact.
	NoSuchOption RefusalReason = "no_such_option"
	// NoText: the artifact has no text to edit yet.
	NoText RefusalReason = "no_text"
	// BeingWritten: the pipeline is writing the artifact; editing it would lose
	// that run.
	BeingWritten RefusalReason = "being_written"
	// NoItems and TooManyItems: a foreach artifact's source splits into no items, or
	// more than MaxItems.
	NoItems      RefusalReason = "no_items"
	TooManyItems RefusalReason = "too_many_items"
	// ChangePending: the stale artifact waits for the artifact whose change made it
	// stale (Source) to be approved again; until then there is nothing to keep it
	// against or regenerate it from.
	ChangePending RefusalReason = "change_pending"
)

func (r *Refusal) Error() string {
	if r.Artifact != "" {
		return "workflow: " + string(r.Reason) + ": " + r.Artifact
	}
	return "workflow: " + string(r.Reason)
}
