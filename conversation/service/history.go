package service

import (
	"context"
	"fmt"
	"log/slog"
	"unicode/utf8"

	"github.com/threadwright/threadwright/conversation"
)

// compact bounds the history a turn gives the model: it drops from cp the messages
// already folded into the summary and, when the rest pass HistoryTokens or fill three
// quarters of HistoryMessages, folds the older half of them into the summary
// (cp.Conversation.State, saved with the turn). Counting every stored message, not
// only the dialogue, makes messages fold before they can leave the loaded window.
// Only dialogue is summarized; other records (artifact revisions) are just passed
// over, their content lives in the workflow state. A summarizer failure is logged and
// the turn goes on with the longer history. Usage is added to the state's totals.
func (s *Service) compact(ctx context.Context, log *slog.Logger, cp *conversation.Checkpoint) {
	st := &cp.Conversation.State
	live := cp.Messages[:0:0]
	for _, m := range cp.Messages {
		if m.Seq > st.SummaryThroughSeq {
			live = append(live, m)
		}
	}
	cp.Messages = live
	if s.cfg.Summarizer == nil || len(live) < 2 ||
		(estimateTokens(dialogue(live)) <= s.cfg.HistoryTokens && len(live) <= s.cfg.HistoryMessages*3/4) {
		return
	}
	half := live[:len(live)/2]
	if fold := dialogue(half); len(fold) > 0 {
		r := conversation.SummaryRequest{Previous: st.Summary, Messages: fold}
		if st.Workflow != nil {
			r.Workflow, r.Locale = st.Workflow.Name, st.Workflow.Locale
		}
		summary, u, err := s.cfg.Summarizer.Summarize(ctx, r)
		st.PromptTokens += u.PromptTokens
		st.CompletionTokens += u.CompletionTokens
		if err != nil {
			log.Warn("history not summarized; the turn uses the longer history", "error", err)
			return
		}
		st.Summary = summary
	}
	st.SummaryThroughSeq = half[len(half)-1].Seq
	cp.Messages = live[len(half):]
	log.Info("history summarized", "messages", len(half), "through_seq", st.SummaryThroughSeq)
}

// estimateTokens estimates the tokens of msgs' texts: four characters a token, the
// usual rule of thumb for English with OpenAI's tokenizers.
func estimateTokens(msgs []conversation.Message) int {
	n := 0
	for _, m := range msgs {
		n += utf8.RuneCountInString(m.Text)/4 + 4
	}
	return n
}

// dialogue returns the messages of msgs that are part of the conversation (user,
// assistant and earlier thread context), leaving out records such as artifact
// revisions.
func dialogue(msgs []conversation.Message) []conversation.Message {
	out := make([]conversation.Message, 0, len(msgs))
	for _, m := range msgs {
		switch m.Role {
		case conversation.RoleUser, conversation.RoleAssistant, conversation.RoleContext:
			out = append(out, m)
		}
	}
	return out
}

// clipAll returns msgs with every text clipped to MaxPromptChars.
func (s *Service) clipAll(msgs []conversation.Message) []conversation.Message {
	for i := range msgs {
		msgs[i].Text = clip(msgs[i].Text, s.cfg.MaxPromptChars)
	}
	return msgs
}

// clip shortens text to at most n characters (runes), noting how much was left out.
func clip(text string, n int) string {
	total := utf8.RuneCountInString(text)
	if total <= n {
		return text
	}
	cut := 0
	for i := range text {
		if n == 0 {
			cut = i
			break
		}
		n--
	}
	return fmt.Sprintf("%s\n[… message clipped: the first %d of %d characters are shown]", text[:cut], utf8.RuneCountInString(text[:cut]), total)
}
