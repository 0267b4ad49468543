package conversation

import (
	"context"
	"time"
)

// UsageRecord is one row of the usage ledger: the model usage of one saved turn (or
// of a pipeline's checkpoint), kept with the turn in the same transaction (Turn.Usage)
// so that `threadwright usage` and the token budgets read the same numbers.
type UsageRecord struct {
	// Key is the thread the turn ran in.
	Key Key
	// UserID is the Slack user id of the person whose input the turn answered (""
	// for a pipeline's part).
	UserID string
	// Workflow names the thread's workflow ("" in free conversation).
	Workflow string
	// Model names the model called (the chat completion request's model field): a
	// turn that called several models (OPENAI_MODEL, OPENAI_SMALL_MODEL, a workflow
	// profile's) writes one row per model.
	Model string
	// Turns is 1 on one row of a finished turn (its main model's, see
	// Service.usageRecords) and 0 on its other rows and on a pipeline's checkpoint,
	// so that summing Turns counts each turn once.
	Turns int
	// PromptTokens and CompletionTokens are OpenAI's usage fields, summed over the
	// turn's chat completions of Model.
	PromptTokens     int
	CompletionTokens int
	// At is set by the store when the turn is saved.
	At time.Time
}

// Tokens returns the record's prompt and completion tokens together.
func (r UsageRecord) Tokens() int64 { return int64(r.PromptTokens) + int64(r.CompletionTokens) }

// UsageBy is what a usage report groups by.
type UsageBy string

// The groupings of a usage report (`threadwright usage --by`).
const (
	UsageByChannel  UsageBy = "channel"
	UsageByUser     UsageBy = "user"
	UsageByWorkflow UsageBy = "workflow"
	UsageByModel    UsageBy = "model"
)

// UsageTotal is one line of a usage report: the sums of the ledger rows whose
// grouping column equals Group ("" for rows without one) and whose model is Model
// (a report by model has one line per model), so that each line can be priced.
type UsageTotal struct {
	Group            string
	Model            string
	Turns            int64
	PromptTokens     int64
	CompletionTokens int64
}

// UsageFilter selects ledger rows for UsageSince: those of TeamID since Since, and of
// UserID or ChannelID when set.
type UsageFilter struct {
	TeamID    string
	UserID    string
	ChannelID string
	Since     time.Time
}

// UsageStore reads the usage ledger (store/sqlite and store/postgres implement it,
// migration 00010).
type UsageStore interface {
	// UsageReport sums the ledger rows since since, grouped by by and by model,
	// largest total tokens first. Errors: the database's, wrapped; an unknown by is an error.
	UsageReport(ctx context.Context, since time.Time, by UsageBy) ([]UsageTotal, error)
	// UsageSince returns the ledger rows f selects, oldest first (Key and At set).
	UsageSince(ctx context.Context, f UsageFilter) ([]UsageRecord, error)
}
