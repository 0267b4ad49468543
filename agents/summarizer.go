package agents

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"unicode"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/internal/textcut"
	"github.com/threadwright/threadwright/prompts"
)

// DefaultSummaryChars is the default of SummarizerConfig.MaxChars.
const DefaultSummaryChars = 4000

// MinSummaryChars is the smallest SummarizerConfig.MaxChars; smaller values are
// raised to it.
const MinSummaryChars = 200

// maxSummaryMessage bounds one message's text in the summarizer's prompt, in bytes.
const maxSummaryMessage = 4 << 10

// Lines the Summarizer adds to a summary itself, so that they never depend on the
// model remembering them. Summarize removes them from SummaryRequest.Previous before
// the model sees it, and from the model's answer if it copied them.
const (
	// SummaryWorkflowNote is the first line of the summary of a thread that runs a
	// workflow (SummaryRequest.Workflow set): the summary leaves those out, the
	// checkpoint has them (docs/architecture.md, "Models").
	SummaryWorkflowNote = "(Artifact texts, selections and the workflow state are kept in the checkpoint.)"
	// SummaryCutNote is the last line of a summary whose model answer was cut off
	// (finish_reason "length" or "content_filter").
	SummaryCutNote = "(The summary was cut short here; some older details may be missing.)"
)

// ErrEmptySummary means the model's answer held no summary: it was empty, blank, or
// had no letters or digits (after the Summarizer's own lines and a code fence around
// it are removed). Summarize returns it wrapped, with SummaryRequest.Previous.
var ErrEmptySummary = errors.New("agents: the model returned no summary")

// SummarizerConfig configures a Summarizer. Client and Model are required; the zero
// value of every other field picks its default.
type SummarizerConfig struct {
	// Client calls the model (a *Client).
	Client Completer
	// Model is the small model (OPENAI_SMALL_MODEL).
	Model string
	// Prompts renders the prompts; default prompts.MustParse().
	Prompts *prompts.Set
	// MaxChars caps a summary's length in characters (runes), SummaryWorkflowNote
	// and SummaryCutNote included (default DefaultSummaryChars; at least
	// MinSummaryChars). The model is asked to stay within it, and a longer answer is
	// cut at a sentence boundary.
	MaxChars int
	// Logger receives a warning when an answer was cut off; default slog.Default().
	Logger *slog.Logger
}

// Summarizer folds older messages of a thread into its running summary with the small
// model (docs/architecture.md, "Models": context is bounded; older history is
// summarized into the checkpoint). It implements conversation.Summarizer and is safe
// for concurrent use.
//
// One Summarize call makes one model request, without tools: a system prompt (template
// prompts.SummarizeSystem: what to keep — facts, decisions, names, numbers, open
// questions, who asked for what — the workflow note, the language and the length) and
// a user message (prompts.SummarizeRequest: the previous summary, then the messages,
// oldest first, each with its author). The answer, in plain text, is the summary.
type Summarizer struct {
	client   Completer
	model    string
	prompts  *prompts.Set
	maxChars int
	logger   *slog.Logger
}

var _ conversation.Summarizer = (*Summarizer)(nil)

// NewSummarizer returns a Summarizer for cfg, filling in defaults. It panics when
// cfg.Client is nil or cfg.Model is empty (a wiring mistake).
func NewSummarizer(cfg SummarizerConfig) *Summarizer {
	if cfg.Client == nil || cfg.Model == "" {
		panic("agents: NewSummarizer needs SummarizerConfig.Client and Model")
	}
	s := &Summarizer{
		client:   cfg.Client,
		model:    cfg.Model,
		prompts:  cfg.Prompts,
		maxChars: max(cmp.Or(cfg.MaxChars, DefaultSummaryChars), MinSummaryChars),
		logger:   cfg.Logger,
	}
	s.prompts = orPrompts(s.prompts)
	s.logger = cmp.Or(s.logger, slog.Default())
	return s
}

// Summarize folds r.Messages into r.Previous and returns the new summary, plain text
// of at most MaxChars characters, with the model's token usage.
//
// The messages are shown with their authors: a person as a Slack mention (<@U…>), a
// RoleContext message as one posted in the thread before the bot was asked, the bot's
// replies as the assistant's; RoleRevision messages (and any other role) and blank
// messages are left out, and a message's text is cut to 4 KiB. When none is left,
// Summarize returns r.Previous unchanged without a model call. The model is told to
// write in r.Locale's language (the conversation's language when r.Locale is empty)
// and, when r.Workflow is set, not to repeat the workflow's artifact texts,
// selections or state, which the checkpoint keeps; the summary then starts with the
// line SummaryWorkflowNote, which Summarize adds itself.
//
// The answer is trimmed (and a code fence around it, or an English preamble line such
// as "Here is the updated summary:", removed) and, when longer than MaxChars allows,
// cut at the last sentence or line end that keeps at least half of it (else at a
// word, marked with "…").
//
// An answer cut off by the output token limit (finish_reason "length", or
// "content_filter" when the filter stopped it midway) is kept, not rejected: without
// its last, unfinished sentence, and with SummaryCutNote as its last line; a warning
// is logged. Rejecting it would leave the history unsummarized, and the next turn
// would ask again with more. The note is dropped from the summary the next time it is
// folded, so it describes the latest fold only.
//
// Errors, each returned with r.Previous (unchanged) and the usage so far: ErrEmptySummary
// (wrapped) for an answer without a summary; otherwise the model client's (see
// Client.Complete), including ctx's.
func (s *Summarizer) Summarize(ctx context.Context, r conversation.SummaryRequest) (string, conversation.Usage, error) {
	msgs := summaryMessages(r.Messages)
	if len(msgs) == 0 {
		return r.Previous, conversation.Usage{}, nil
	}
	budget := s.maxChars
	if r.Workflow != "" {
		budget -= utf8.RuneCountInString(SummaryWorkflowNote) + 1
	}
	system, err := s.prompts.Render(prompts.SummarizeSystem, prompts.SummarizeSystemData{
		Workflow: r.Workflow, Language: languageName(r.Locale), MaxChars: budget,
	})
	if err != nil {
		return r.Previous, conversation.Usage{}, fmt.Errorf("agents: summarize: %w", err)
	}
	user, err := s.prompts.Render(prompts.SummarizeRequest, prompts.SummarizeRequestData{
		Previous: stripSummaryNotes(r.Previous), Messages: msgs,
	})
	if err != nil {
		return r.Previous, conversation.Usage{}, fmt.Errorf("agents: summarize: %w", err)
	}
	comp, err := s.client.Complete(ctx, openai.ChatCompletionRequest{
		Model: s.model,
		Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: system},
			{Role: openai.ChatMessageRoleUser, Content: user},
		},
	})
	if err != nil && !errors.Is(err, ErrEmptyResponse) {
		return r.Previous, comp.Usage, fmt.Errorf("agents: summarize: %w", err)
	}

	text := cleanSummary(comp.Content)
	cut := comp.Truncated || comp.FinishReason == openai.FinishReasonContentFilter
	if cut {
		text = dropUnfinished(text)
	}
	if !hasWords(text) {
		return r.Previous, comp.Usage, fmt.Errorf("agents: summarize (finish_reason %q, %d bytes of content): %w",
			comp.FinishReason, len(comp.Content), ErrEmptySummary)
	}
	if cut {
		budget -= utf8.RuneCountInString(SummaryCutNote) + 1
		s.logger.WarnContext(ctx, "summary was cut off; keeping its complete sentences",
			slog.String("model", s.model), slog.String("finish_reason", string(comp.FinishReason)),
			slog.Int("messages", len(msgs)), slog.Int("chars", utf8.RuneCountInString(text)))
	}
	text = fitSentences(text, budget)

	var b strings.Builder
	if r.Workflow != "" {
		b.WriteString(SummaryWorkflowNote + "\n")
	}
	b.WriteString(text)
	if cut {
		b.WriteString("\n" + SummaryCutNote)
	}
	return b.String(), comp.Usage, nil
}

// summaryMessages returns the messages of msgs that belong in a summary, for the
// SummarizeRequest template.
func summaryMessages(msgs []conversation.Message) []prompts.SummaryMessage {
	var out []prompts.SummaryMessage
	for _, m := range msgs {
		text := strings.TrimSpace(m.Text)
		if text == "" {
			continue
		}
		sm := prompts.SummaryMessage{Role: string(m.Role), Text: textcut.BytesMark(text, maxSummaryMessage, textcut.Truncated)}
		switch m.Role {
		case conversation.RoleUser, conversation.RoleContext:
			if m.UserID != "" {
				sm.Author = "<@" + m.UserID + ">"
			}
		case conversation.RoleAssistant:
		default:
			continue // revisions live in the workflow state
		}
		out = append(out, sm)
	}
	return out
}

// stripSummaryNotes removes the Summarizer's own lines from a summary.
func stripSummaryNotes(s string) string {
	s = strings.TrimSpace(s)
	for {
		t := strings.TrimSpace(strings.TrimPrefix(s, SummaryWorkflowNote))
		t = strings.TrimSpace(strings.TrimSuffix(t, SummaryCutNote))
		if t == s {
			return s
		}
		s = t
	}
}

// cleanSummary trims the model's answer and removes what is not part of the summary:
// a code fence around it, a preamble line ("Here is the updated summary:") and copies
// of the Summarizer's own lines.
func cleanSummary(s string) string {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "```") && strings.HasSuffix(s, "```") && len(s) >= 6 {
		s = strings.TrimSuffix(s, "```")
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[i+1:] // the fence and its language tag
		} else {
			s = s[3:]
		}
		s = strings.TrimSpace(s)
	}
	first, rest, _ := strings.Cut(s, "\n")
	first = strings.Trim(first, "*_# \t\r")
	if strings.HasSuffix(first, ":") && strings.Contains(strings.ToLower(first), "summary") && utf8.RuneCountInString(first) <= 60 {
		s = rest
	}
	return stripSummaryNotes(s)
}

// hasWords reports whether s has a letter or a digit.
func hasWords(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }) >= 0
}

// dropUnfinished removes the unfinished sentence at the end of a cut-off text: it cuts
// s after its last sentence or line end. A text without one is kept, marked with "…".
func dropUnfinished(s string) string {
	rs := []rune(s)
	for j := len(rs); j > 0; j-- {
		if sentenceEnd(rs, j) {
			return strings.TrimRightFunc(string(rs[:j]), unicode.IsSpace)
		}
	}
	if s == "" {
		return s
	}
	return strings.TrimRightFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) }) + "…"
}

// fitSentences cuts s to at most n runes: after the last sentence or line end within
// them when that keeps at least half, otherwise after the last whole word, marked
// with "…".
func fitSentences(s string, n int) string {
	rs := []rune(s)
	if len(rs) <= n {
		return s
	}
	for j := n; j > n/2; j-- {
		if sentenceEnd(rs, j) {
			return strings.TrimRightFunc(string(rs[:j]), unicode.IsSpace)
		}
	}
	end := n - 1 // room for "…"
	for j := end; j > n/2; j-- {
		if unicode.IsSpace(rs[j]) {
			end = j
			break
		}
	}
	return strings.TrimRightFunc(string(rs[:end]), func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) }) + "…"
}

// sentenceEnd reports whether rs[:j] ends a sentence or a line: the rune after it
// starts a new line, or rs[:j] ends with ".", "!", "?" or "…" (perhaps followed by
// closing quotes, brackets or Markdown emphasis) followed by white space or the end of
// the text, or with a full-width "。", "！" or "？".
func sentenceEnd(rs []rune, j int) bool {
	if j <= 0 || j > len(rs) {
		return false
	}
	if j < len(rs) && rs[j] == '\n' {
		return true
	}
	k := j - 1
	for k > 0 && strings.ContainsRune(`)]"'»”’*_`, rs[k]) {
		k--
	}
	switch rs[k] {
	case '。', '！', '？':
		return true
	case '.', '!', '?', '…':
		return j == len(rs) || unicode.IsSpace(rs[j])
	}
	return false
}
