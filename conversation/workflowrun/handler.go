package workflowrun

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/history"
	"github.com/threadwright/threadwright/conversation/render"
	"github.com/threadwright/threadwright/conversation/workflow"
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

// threadLink returns label as a Slack link to the thread of key (chat.getPermalink,
// when the Messenger is a Permalinker), or label alone when there is no link.
func (s *Handler) threadLink(ctx context.Context, key conversation.Key, label string) string {
	if link := s.permalink(ctx, key); link != "" {
		return "<" + link + "|" + label + ">"
	}
	return label
}

// permalink returns the permalink of key's thread (chat.getPermalink), or "" when
// the messenger cannot give one.
func (s *Handler) permalink(ctx context.Context, key conversation.Key) string {
	p, ok := s.cfg.Messenger.(conversation.Permalinker)
	if !ok || key.ThreadTS == "" {
		return ""
	}
	link, err := p.Permalink(ctx, key, key.ThreadTS)
	if err != nil {
		if !errors.Is(err, errors.ErrUnsupported) {
			s.log.Warn("no permalink", "thread_ts", key.ThreadTS, "error", err)
		}
		return ""
	}
	return link
}

// profileDefined reports whether the deployment defines model profile name.
func (s *Handler) profileDefined(name string) bool {
	return s.cfg.ProfileDefined != nil && s.cfg.ProfileDefined(name)
}

// machine returns the machine of def under the service's approval policy.
func (s *Handler) machine(def *workflow.Definition) workflow.Machine {
	return workflow.Machine{Def: def, Approvers: s.cfg.Approvers, Now: s.cfg.Now}
}

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
	Fetcher conversation.SourceFetcher
	// Files reads the files of a person's message, so that an attached brief fills a
	// run's input (docs/architecture.md, "Files"); nil reads none.
	Files        conversation.FileReader
	FetchAllowed func(channelID string) bool
	// ProfileDefined reports whether the deployment defines a model profile (nil:
	// none is).
	ProfileDefined func(name string) bool
	// ToolAvailable reports whether a tool an artifact names can run in a channel
	// (nil: every tool can).
	ToolAvailable func(channelID, name string) bool
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
