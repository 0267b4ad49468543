package workflowrun

import (
	"time"

	"github.com/threadwright/threadwright/conversation"
)

// Config configures the workflows' handler. Messenger, Store, Workflows and
// Agent are required.
type Config struct {
	// Messenger posts to the chat (the runtime's, which scrubs secrets).
	Messenger conversation.Messenger
	// Store is read for a person's runs in a channel (Store.Workflows).
	Store conversation.Store
	// Workflows are the artifact workflows offered; Agent writes and judges their
	// artifacts.
	Workflows conversation.Workflows
	Agent     conversation.WorkflowAgent
	// Fetcher reads the pages of fetch artifacts (nil: none); FetchAllowed says in
	// which channels it may (nil: all).
	Fetcher      conversation.SourceFetcher
	FetchAllowed func(channelID string) bool
	// ProfileDefined reports whether the deployment defines a model profile (nil:
	// none is).
	ProfileDefined func(name string) bool
	// Approvers, when set, are the only people who may approve artifacts.
	Approvers []string
	// Format converts the model's Markdown to the chat's markup.
	Format func(markdown string) string
	// MaxPromptChars bounds one message's text as given to the model.
	MaxPromptChars int
	// PipelineConcurrency bounds the items of one pipeline written at once;
	// TurnTimeout bounds a turn (a pipeline's part gives way at half of it);
	// MaxAttempts is how many times a pipeline item is tried.
	PipelineConcurrency int
	TurnTimeout         time.Duration
	MaxAttempts         int
	// Metrics, when set, is told of workflow transitions and pipeline items.
	Metrics conversation.Metrics
	// Redact scrubs configured secrets out of failure messages and reasons;
	// Classify says what a failure came from.
	Redact   func(string) string
	Classify conversation.Classifier
	// Now returns the current time.
	Now func() time.Time
}
