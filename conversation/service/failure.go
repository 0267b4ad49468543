package service

import (
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/render"
)

// explain classifies err: the core's own markers first (a step's source, a tool, the
// store), then Config.Classify (conversation.Classifier.Explain).
func (s *Runtime) explain(err error) conversation.Failure {
	return s.cfg.Classify.Explain(err)
}

// failureMessage is a failed step's message in lang (render.FailureMessage), with
// configured secrets scrubbed from it.
func (s *Runtime) failureMessage(lang string, err error, hint string) string {
	return s.redact(render.FailureMessage(lang, s.explain(err), err, hint))
}
