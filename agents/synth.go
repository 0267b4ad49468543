package agents

import (
	"cmp"
	"context"
	"strings"

	"github.com/threadwright/threadwright/agents/mrkdwn"
	"github.com/threadwright/threadwright/conversation"
)

// Default texts of a Synthesizer.
const (
	// DefaultTruncatedNote is appended to an answer whose findings are Truncated.
	DefaultTruncatedNote = "_This answer may be incomplete: I ran out of room or steps before finishing._"
	// DefaultEmptyReply is the reply when the executor found no answer.
	DefaultEmptyReply = "Sorry, I couldn't come up with an answer to that. Could you rephrase it or add a bit more detail?"
)

// Synthesizer turns the executor's findings into the Slack reply, deterministically and
// without a model call, with package agents/mrkdwn: it matches the answer's [n]
// markers to the sources the turn's tools returned (mrkdwn.Cite), converts the
// answer's Markdown to mrkdwn (mrkdwn.FromMarkdown) and ends it with its sources
// (mrkdwn.Sources; docs/tools.md, "Citations"). It implements conversation.Synthesizer and
// conversation.AnswerEditor. The zero value is ready to use.
type Synthesizer struct {
	// TruncatedNote is appended, after a blank line, when the findings are Truncated;
	// mrkdwn; default DefaultTruncatedNote.
	TruncatedNote string
	// EmptyReply is the reply when the answer is empty or blank; mrkdwn; default
	// DefaultEmptyReply.
	EmptyReply string
}

var (
	_ conversation.Synthesizer  = (*Synthesizer)(nil)
	_ conversation.AnswerEditor = (*Synthesizer)(nil)
)

// NewSynthesizer returns a Synthesizer with the default texts.
func NewSynthesizer() *Synthesizer { return &Synthesizer{} }

// Synthesize returns f.Answer as Slack mrkdwn, its markers matched to f.ToolCalls'
// sources and the sources listed at its end, with the truncation note when
// f.Truncated, or the empty reply when there is no answer. It never fails.
func (s *Synthesizer) Synthesize(_ context.Context, _ conversation.Prompt, f conversation.Findings) (string, error) {
	answer := strings.TrimSpace(f.Answer)
	if answer == "" {
		return cmp.Or(s.EmptyReply, DefaultEmptyReply), nil
	}
	answer, sources := mrkdwn.Cite(answer, f.ToolCalls)
	reply := mrkdwn.FromMarkdown(answer)
	if list := mrkdwn.Sources(sources); list != "" {
		reply += "\n\n" + list
	}
	if f.Truncated {
		reply += "\n\n" + cmp.Or(s.TruncatedNote, DefaultTruncatedNote)
	}
	return reply, nil
}

// EditAnswer returns f.Answer as the reply shows it, in Markdown (its markers
// renumbered, its sources listed: SourcesMarkdown), and whether that is more than
// f.Answer: whether mrkdwn.Cite changes its markers or adds sources.
func (s *Synthesizer) EditAnswer(f conversation.Findings) (string, bool) {
	answer := strings.TrimSpace(f.Answer)
	cited, sources := mrkdwn.Cite(answer, f.ToolCalls)
	if len(sources) == 0 && cited == answer {
		return f.Answer, false
	}
	if list := mrkdwn.SourcesMarkdown(sources); list != "" {
		cited += "\n\n" + list
	}
	return cited, true
}
