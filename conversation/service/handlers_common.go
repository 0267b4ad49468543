package service

import (
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/history"
	"github.com/threadwright/threadwright/conversation/render"
)

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
