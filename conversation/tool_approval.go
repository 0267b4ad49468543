package conversation

// Tool confirmation (README "Tool policy"; docs/architecture.md "Assistant
// pipeline"): when the executor stops before a tool call that needs the confirmation
// of the person who asked (Findings.Pending), the turn posts a card with the call
// and Approve / Deny, saves the call in the checkpoint (State.ToolApproval) and ends.
// The click is an input like any other, run in the thread's order: it resumes the
// turn (Prompt.Resume), which runs or denies the call and answers. The thread's next
// message voids a confirmation nobody gave.

// ToolApproval is a tool call waiting for a person's confirmation (State.ToolApproval).
type ToolApproval struct {
	// ID names this confirmation in its card's buttons (Action.Arg): the id of the
	// input whose turn asked and a digest of the call (approvalID), so that a click
	// on a card of an earlier run of that input, which may have asked for another
	// call, is out of date. A click that carries another id is out of date.
	ID string `json:"id"`
	// UserID is the person who asked, the only one who may decide.
	UserID string `json:"user_id"`
	// CardTS is the card's message ("" when it could not be posted).
	CardTS string `json:"card_ts,omitempty"`
	// Request is the person's request, the resumed turn's Prompt.Text.
	Request string `json:"request"`
	// Tool is the executor's pending call and transcript.
	Tool PendingTool `json:"tool"`
	// Begun is set, and saved, before an approved call runs: a re-run of the click
	// (the turn was cut after the call began) does not run it again.
	Begun bool `json:"begun,omitempty"`
}
