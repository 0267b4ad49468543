package assistant

import (
	"context"
	"log/slog"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/history"
	"github.com/threadwright/threadwright/conversation/render"
)

// compact bounds the history of cp (history.Compactor, with the configured
// Summarizer, HistoryTokens and HistoryMessages).
func (c *Config) compact(ctx context.Context, log *slog.Logger, cp *conversation.Checkpoint) {
	history.Compactor{Summarizer: c.Summarizer, Tokens: c.HistoryTokens, Messages: c.HistoryMessages}.Compact(ctx, log, cp)
}

// clipAll returns msgs with every text clipped to MaxPromptChars.
func (c *Config) clipAll(msgs []conversation.Message) []conversation.Message {
	return history.ClipAll(msgs, c.MaxPromptChars)
}

// redact scrubs secrets out of text with Config.Redact, if set.
func (c *Config) redact(text string) string {
	if c.Redact == nil {
		return text
	}
	return c.Redact(text)
}

// failureMessage is a failed step's message in lang (render.FailureMessage), with
// configured secrets scrubbed from it.
func (c *Config) failureMessage(lang string, err error, hint string) string {
	return c.redact(render.FailureMessage(lang, c.Classify.Explain(err), err, hint))
}

// Handler answers people's messages with the assistant pipeline (scope
// check → executor → synthesizer), and runs the assistant view, tool approvals and a
// failed answer's Retry.
type Handler struct {
	cfg Config
	log *slog.Logger
	// threads dresses assistant threads, when the Messenger can (view.go).
	threads conversation.AssistantThreads
	// raw is Config.Messenger before redaction wraps it, for its optional
	// interfaces (DirectMessages).
	raw conversation.Messenger
}

// New returns the assistant's handler; raw is the chat's Messenger
// before the runtime scrubbed it, for its optional interfaces (AssistantThreads,
// DirectMessages).
func New(cfg Config, log *slog.Logger, raw conversation.Messenger) *Handler {
	threads, _ := raw.(conversation.AssistantThreads)
	if cfg.Scope != nil {
		cfg.Scope = tracedScope{cfg.Scope} // trace.go
	}
	return &Handler{cfg: cfg, log: log, threads: threads, raw: raw}
}
