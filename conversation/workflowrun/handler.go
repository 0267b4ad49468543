package workflowrun

import (
	"log/slog"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/history"
	"github.com/threadwright/threadwright/conversation/render"
)

// clipAll returns msgs with every text clipped to MaxPromptChars.
func (s *Handler) clipAll(msgs []conversation.Message) []conversation.Message {
	return history.ClipAll(msgs, s.cfg.MaxPromptChars)
}

// redact scrubs secrets out of text with Config.Redact, if set.
func (s *Handler) redact(text string) string {
	if s.cfg.Redact == nil {
		return text
	}
	return s.cfg.Redact(text)
}

// failureMessage is a failed step's message in lang (render.FailureMessage), with
// configured secrets scrubbed from it.
func (s *Handler) failureMessage(lang string, err error, hint string) string {
	return s.redact(render.FailureMessage(lang, s.cfg.Classify.Explain(err), err, hint))
}

// Handler runs the turns of artifact workflows: clicks, commands, replies and
// pipeline parts (docs/architecture.md, "Workflow machine").
type Handler struct {
	cfg Config
	log *slog.Logger
	// raw is Config.Messenger before redaction wraps it, for its optional
	// interfaces (ModalOpener).
	raw conversation.Messenger
}

// New returns the workflows' handler; raw is the chat's Messenger
// before the runtime scrubbed it, for its optional interfaces (ModalOpener).
func New(cfg Config, log *slog.Logger, raw conversation.Messenger) *Handler {
	return &Handler{cfg: cfg, log: log, raw: raw}
}
