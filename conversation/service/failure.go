package service

import (
	"context"
	"errors"
	"strings"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/render"
)

// explain classifies err: the core's own markers first (a step's source, a tool, the
// store), then Config.Classify.
func (s *Service) explain(err error) conversation.Failure {
	var te *conversation.ToolError
	var tf *conversation.TaskFailure
	var sf *stepFailure
	switch {
	case errors.As(err, &te):
		return conversation.Failure{Cause: conversation.CauseTool, Tool: te.Tool}
	case errors.As(err, &tf) && len(tf.Tools) > 0:
		return conversation.Failure{Cause: conversation.CauseTool, Tool: tf.Tools[0]}
	case errors.Is(err, conversation.ErrUnavailable):
		return conversation.Failure{Cause: conversation.CauseStore}
	}
	if s.cfg.Classify != nil {
		if f := s.cfg.Classify(err); f.Cause != conversation.CauseUnknown {
			return f
		}
	}
	if errors.As(err, &sf) {
		return conversation.Failure{Cause: conversation.Cause(sf.source)}
	}
	return conversation.Failure{}
}

// failureMessage is a failed step's message in lang: what failed (explain), the
// error's own words for people when it has them, and what the Retry button does
// (hint: "retry.step" or "retry.answer"; "" for none). A failure whose cause is
// unknown says so as ErrorReply does, without its "try again" when there is Retry.
// Configured secrets are scrubbed from it.
func (s *Service) failureMessage(lang string, err error, hint string) string {
	f := s.explain(err)
	var parts []string
	switch {
	case f.Cause == conversation.CauseTool && f.Tool != "":
		parts = append(parts, render.Tr(lang, "failed.tool", f.Tool))
	case f.Cause != conversation.CauseUnknown:
		text := render.Tr(lang, "failed."+string(f.Cause))
		if f.Detail != "" {
			text = strings.TrimSuffix(text, ".") + " (" + f.Detail + ")."
		}
		parts = append(parts, text)
	}
	var u interface{ UserMessage() string }
	switch {
	case errors.As(err, &u) && strings.TrimSpace(u.UserMessage()) != "":
		parts = append(parts, strings.TrimSpace(u.UserMessage()))
	case len(parts) > 0:
	case errors.Is(err, context.DeadlineExceeded):
		parts = append(parts, render.Tr(lang, "failed.timeout"))
	default:
		parts = append(parts, render.Tr(lang, "failed.unknown"))
	}
	if hint != "" {
		parts = append(parts, render.Tr(lang, hint))
	}
	return s.redact(strings.Join(parts, " "))
}
