package agents

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/agents/function"
	"github.com/threadwright/threadwright/agents/mrkdwn"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/internal/textcut"
	"github.com/threadwright/threadwright/prompts"
)

// classifyTool is the function the scope classifier must call.
const classifyTool = "classify_scope"

// DefaultScopeHistory is how many recent messages the classifier sees with a request.
const DefaultScopeHistory = 4

// ScopeConfig configures a ScopeChecker.
type ScopeConfig struct {
	// Client calls the small model (a *Client). Required when Description is set.
	Client Completer
	// Model is the small model's name (OPENAI_SMALL_MODEL).
	Model string
	// Description is what the deployment is for, a noun phrase that reads after
	// "This assistant is for" and "I'm set up for", e.g. "questions about ACME's HR
	// policies". Empty: no model classification (rules only, everything else in scope).
	Description string
	// Deny rules: a request whose text matches one is out of scope, without a model
	// call. Deny wins over Allow.
	Deny []*regexp.Regexp
	// Allow rules: a request whose text matches one is in scope, without a model call.
	Allow []*regexp.Regexp
	// History is how many of the newest history messages go to the classifier with the
	// request, so a follow-up is judged in context (default DefaultScopeHistory;
	// negative: none).
	History int
	// Prompts renders the classifier's prompts and the refusal; default
	// prompts.MustParse().
	Prompts *prompts.Set
	// Logger receives a warning when the model's answer cannot be read; default
	// slog.Default().
	Logger *slog.Logger
}

// ScopeChecker decides whether a request is within what the deployment is for
// (docs/architecture.md, "Assistant pipeline"): configured deny and allow rules first,
// then the small model. It implements conversation.ScopeChecker and is safe for
// concurrent use.
type ScopeChecker struct {
	client      Completer
	model       string
	description string
	deny, allow []*regexp.Regexp
	history     int
	prompts     *prompts.Set
	logger      *slog.Logger
}

var _ conversation.ScopeChecker = (*ScopeChecker)(nil)

// NewScopeChecker returns a ScopeChecker for cfg. It panics when cfg.Description is set
// without a Client and Model (a wiring mistake).
func NewScopeChecker(cfg ScopeConfig) *ScopeChecker {
	if cfg.Description != "" && (cfg.Client == nil || cfg.Model == "") {
		panic("agents: NewScopeChecker needs ScopeConfig.Client and Model to classify against a Description")
	}
	s := &ScopeChecker{
		client:      cfg.Client,
		model:       cfg.Model,
		description: strings.TrimSpace(cfg.Description),
		deny:        cfg.Deny,
		allow:       cfg.Allow,
		history:     cmp.Or(cfg.History, DefaultScopeHistory),
		prompts:     cfg.Prompts,
		logger:      cfg.Logger,
	}
	s.prompts = orPrompts(s.prompts)
	s.logger = cmp.Or(s.logger, slog.Default())
	return s
}

// CheckScope decides on p.Text:
//
//  1. a Deny match: out of scope, no model call;
//  2. an Allow match: in scope, no model call;
//  3. no Description, or an empty request: in scope;
//  4. otherwise the small model classifies the request (with the last few history
//     messages) by calling the classify_scope function, which the request forces
//     with tool_choice. A model that answers in text instead is read for a plain
//     yes/no or in/out of scope. An answer that cannot be read — garbage, or an
//     empty response — counts as in scope (the executor still bounds what happens) and
//     is logged as a warning.
//
// An out-of-scope Verdict carries Reply, a polite refusal that names what the bot is
// for (template scope_refusal), and Reason for logs. Errors: the model client's (see
// Client.Complete), including ctx's.
func (s *ScopeChecker) CheckScope(ctx context.Context, p conversation.Prompt) (conversation.Verdict, error) {
	text := strings.TrimSpace(p.Text)
	for _, re := range s.deny {
		if re.MatchString(text) {
			return s.refuse(p, "matches deny rule "+re.String())
		}
	}
	for _, re := range s.allow {
		if re.MatchString(text) {
			return conversation.Verdict{InScope: true, Reason: "matches allow rule " + re.String()}, nil
		}
	}
	switch {
	case s.description == "":
		return conversation.Verdict{InScope: true, Reason: "no scope description configured"}, nil
	case text == "":
		return conversation.Verdict{InScope: true, Reason: "empty request"}, nil
	}

	req, err := s.request(p)
	if err != nil {
		return conversation.Verdict{}, err
	}
	comp, err := s.client.Complete(ctx, req)
	if err != nil && !errors.Is(err, ErrEmptyResponse) {
		return conversation.Verdict{Usage: comp.Usage}, fmt.Errorf("agents: scope check: %w", err)
	}
	inScope, reason, ok := parseClassification(comp)
	if !ok {
		s.logger.WarnContext(ctx, "scope classifier gave no usable answer; treating the request as in scope",
			slog.String("conversation", p.Key.String()), slog.String("model", s.model),
			slog.String("content", textcut.BytesMark(comp.Content, 200, textcut.Truncated)), slog.Int("tool_calls", len(comp.ToolCalls)))
		return conversation.Verdict{InScope: true, Reason: "unreadable classification; defaulted to in scope", Usage: comp.Usage}, nil
	}
	if inScope {
		return conversation.Verdict{InScope: true, Reason: reason, Usage: comp.Usage}, nil
	}
	v, err := s.refuse(p, reason)
	v.Usage = comp.Usage
	return v, err
}

func (s *ScopeChecker) request(p conversation.Prompt) (openai.ChatCompletionRequest, error) {
	system, err := s.prompts.Render(prompts.ScopeSystem, prompts.ScopeData{Description: s.description, ToolName: classifyTool})
	if err != nil {
		return openai.ChatCompletionRequest{}, fmt.Errorf("agents: scope check: %w", err)
	}
	data := prompts.ScopeRequestData{Text: p.Text}
	if s.history > 0 {
		recent := p.History[max(len(p.History)-s.history, 0):]
		for _, m := range recent {
			role := "user"
			if m.Role == conversation.RoleAssistant {
				role = "assistant"
			}
			data.Recent = append(data.Recent, prompts.Turn{Role: role, Text: textcut.BytesMark(m.Text, 500, textcut.Truncated)})
		}
	}
	user, err := s.prompts.Render(prompts.ScopeRequest, data)
	if err != nil {
		return openai.ChatCompletionRequest{}, fmt.Errorf("agents: scope check: %w", err)
	}
	return function.Forced(s.model, system, user, openai.FunctionDefinition{
		Name:        classifyTool,
		Description: "Record whether the message is within the assistant's purpose.",
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"in_scope":{"type":"boolean","description":"true when the message is within the assistant's purpose"},` +
			`"reason":{"type":"string","description":"one short sentence explaining the decision"}},` +
			`"required":["in_scope","reason"],"additionalProperties":false}`),
	}), nil
}

// parseClassification reads the classifier's decision from its classify_scope call or,
// failing that, from a one-word text answer. ok is false when there is no decision.
func parseClassification(c Completion) (inScope bool, reason string, ok bool) {
	for _, tc := range c.ToolCalls {
		if tc.Function.Name != classifyTool {
			continue
		}
		var args struct {
			InScope any    `json:"in_scope"`
			Reason  string `json:"reason"`
		}
		if err := json.Unmarshal([]byte(tc.Function.Arguments), &args); err != nil {
			continue
		}
		switch v := args.InScope.(type) {
		case bool:
			return v, args.Reason, true
		case string: // weak models quote booleans
			if in, ok := parseWord(v); ok {
				return in, args.Reason, true
			}
		}
	}
	if in, ok := parseWord(c.Content); ok {
		return in, "classifier answered in text: " + textcut.BytesMark(strings.TrimSpace(c.Content), 100, textcut.Truncated), true
	}
	return false, "", false
}

var wordSeparators = strings.NewReplacer("-", " ", "_", " ")

// parseWord reads a one-word decision such as "yes", "out_of_scope" or "In scope.".
func parseWord(s string) (inScope bool, ok bool) {
	w := strings.ToLower(strings.TrimSpace(s))
	w = strings.Trim(w, " .!\"'`*")
	w = wordSeparators.Replace(w)
	switch w {
	case "true", "yes", "in scope", "in":
		return true, true
	case "false", "no", "out of scope", "out":
		return false, true
	}
	return false, false
}

// refuse returns an out-of-scope verdict with the refusal reply.
func (s *ScopeChecker) refuse(p conversation.Prompt, reason string) (conversation.Verdict, error) {
	desc := s.description
	if desc == "" {
		desc = "a narrower set of topics"
	}
	reply, err := s.prompts.Render(prompts.ScopeRefusal, prompts.ScopeRefusalData{
		Description: mrkdwn.Escape(desc),
		UserID:      p.UserID,
	})
	if err != nil {
		return conversation.Verdict{}, fmt.Errorf("agents: scope check: %w", err)
	}
	return conversation.Verdict{InScope: false, Reply: reply, Reason: reason}, nil
}
