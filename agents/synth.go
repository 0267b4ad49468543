package agents

import (
	"cmp"
	"context"
	"strings"

	"github.com/threadwright/threadwright/agents/mrkdwn"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/render"
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
// sources and the sources listed at its end (those it cites; when it cites none of
// what its searches returned, those, listed as retrieved, not cited), headed in the
// language of p.Text, with the truncation note when f.Truncated, or the empty reply
// when there is no answer. It never fails.
func (s *Synthesizer) Synthesize(_ context.Context, p conversation.Prompt, f conversation.Findings) (string, error) {
	answer := strings.TrimSpace(f.Answer)
	if answer == "" {
		return cmp.Or(s.EmptyReply, DefaultEmptyReply), nil
	}
	a := mrkdwn.Attribute(answer, f.ToolCalls)
	lang := answerLang(p)
	reply := mrkdwn.FromMarkdown(a.Text)
	for _, list := range []string{
		mrkdwn.Sources(render.Tr(lang, "sources"), a.Cited),
		mrkdwn.RetrievedSources(render.Tr(lang, "sources.retrieved"), a.Retrieved),
	} {
		if list != "" {
			reply += "\n\n" + list
		}
	}
	if f.Truncated {
		reply += "\n\n" + cmp.Or(s.TruncatedNote, DefaultTruncatedNote)
	}
	return reply, nil
}

// EditAnswer returns f.Answer as the reply shows it, in Markdown (its markers
// renumbered, its sources listed: SourcesMarkdown, RetrievedSourcesMarkdown), and
// whether that is more than f.Answer: whether mrkdwn.Attribute changes its markers
// or adds sources.
func (s *Synthesizer) EditAnswer(p conversation.Prompt, f conversation.Findings) (string, bool) {
	answer := strings.TrimSpace(f.Answer)
	a := mrkdwn.Attribute(answer, f.ToolCalls)
	if len(a.Cited) == 0 && len(a.Retrieved) == 0 && a.Text == answer {
		return f.Answer, false
	}
	lang := answerLang(p)
	md := a.Text
	for _, list := range []string{
		mrkdwn.SourcesMarkdown(render.Tr(lang, "sources"), a.Cited),
		mrkdwn.RetrievedSourcesMarkdown(render.Tr(lang, "sources.retrieved"), a.Retrieved),
	} {
		if list != "" {
			md += "\n\n" + list
		}
	}
	return md, true
}

// answerLang is the language of the words the reply adds to an answer: the
// request's (render.TextLocale), English when unknown.
func answerLang(p conversation.Prompt) string {
	return render.UILang(render.TextLocale(p.Text))
}
