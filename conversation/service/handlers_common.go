package service

import (
	"context"
	"log/slog"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/history"
	"github.com/threadwright/threadwright/conversation/render"
)

// compact bounds the history of cp (history.Compactor, with the configured
// Summarizer, HistoryTokens and HistoryMessages).
func (s *assistantHandler) compact(ctx context.Context, log *slog.Logger, cp *conversation.Checkpoint) {
	history.Compactor{Summarizer: s.cfg.Summarizer, Tokens: s.cfg.HistoryTokens, Messages: s.cfg.HistoryMessages}.Compact(ctx, log, cp)
}

// clipAll returns msgs with every text clipped to MaxPromptChars.
func (s *assistantHandler) clipAll(msgs []conversation.Message) []conversation.Message {
	return history.ClipAll(msgs, s.cfg.MaxPromptChars)
}

// redact scrubs secrets out of text with Config.Redact, if set.
func (s *assistantHandler) redact(text string) string {
	if s.cfg.Redact == nil {
		return text
	}
	return s.cfg.Redact(text)
}

// failureMessage is a failed step's message in lang (render.FailureMessage), with
// configured secrets scrubbed from it.
func (s *assistantHandler) failureMessage(lang string, err error, hint string) string {
	return s.redact(render.FailureMessage(lang, s.cfg.Classify.Explain(err), err, hint))
}

// clipAll returns msgs with every text clipped to MaxPromptChars.
func (s *workflowHandler) clipAll(msgs []conversation.Message) []conversation.Message {
	return history.ClipAll(msgs, s.cfg.MaxPromptChars)
}

// redact scrubs secrets out of text with Config.Redact, if set.
func (s *workflowHandler) redact(text string) string {
	if s.cfg.Redact == nil {
		return text
	}
	return s.cfg.Redact(text)
}

// failureMessage is a failed step's message in lang (render.FailureMessage), with
// configured secrets scrubbed from it.
func (s *workflowHandler) failureMessage(lang string, err error, hint string) string {
	return s.redact(render.FailureMessage(lang, s.cfg.Classify.Explain(err), err, hint))
}
