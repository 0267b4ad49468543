package assistant

import (
	"time"

	"github.com/threadwright/threadwright/conversation"
)

// Config configures the assistant's handler. Messenger, Executor and
// Synthesizer are required.
type Config struct {
	// Messenger posts to the chat (the runtime's, which scrubs secrets).
	Messenger conversation.Messenger
	// Scope, when nil, lets every request through (SCOPE_DESCRIPTION unset).
	Scope       conversation.ScopeChecker
	Executor    conversation.Executor
	Synthesizer conversation.Synthesizer
	// Summarizer folds older messages into the conversation's summary (nil: no
	// summaries); HistoryTokens and HistoryMessages bound the history
	// (history.Compactor).
	Summarizer      conversation.Summarizer
	HistoryTokens   int
	HistoryMessages int
	// MaxPromptChars bounds one message's text as given to the model.
	MaxPromptChars int
	// NoStreaming turns off streaming the answer into the thread as it is written.
	NoStreaming bool
	// Format converts the model's Markdown to the chat's markup.
	Format func(markdown string) string
	// Model names the main model, recorded with each answer for the feedback on it.
	Model string
	// SuggestedPrompts are the greeting and prompts of assistant threads (nil: the
	// defaults); Workflows add a start prompt each.
	SuggestedPrompts *conversation.SuggestedPrompts
	Workflows        conversation.Workflows
	// Redact scrubs configured secrets out of failure messages; Classify says what a
	// failure came from.
	Redact   func(string) string
	Classify conversation.Classifier
	// AgentView says the app uses Slack's agent view (AGENT_SURFACE=agent; docs/tools.md,
	// "Agent view"): a DM's threads are the Messages tab's conversations, told what
	// the person views; Viewing reads it (nil: the channel's policy applies, and the
	// model is told nothing of it).
	AgentView bool
	Viewing   conversation.ViewReader
	// Files reads the files people attach (nil: files are not read).
	Files conversation.FileReader
	// Now returns the current time.
	Now func() time.Time
}
