package history

import (
	"context"
	"fmt"
	"log/slog"
	"unicode/utf8"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/internal/textcut"
)

// Compactor folds a conversation's older messages into its summary: Summarizer
// writes the summary (nil: none is written), Tokens bounds the history in estimated
// tokens (Config.HistoryTokens), Messages is how many stored messages a turn loads
// (Config.HistoryMessages).
type Compactor struct {
	Summarizer       conversation.Summarizer
	Tokens, Messages int
}

// Compact bounds the history a turn gives the model: it drops from cp the messages
// already folded into the summary and, when the rest pass c.Tokens or fill three
// quarters of c.Messages, folds the older half of them into the summary
// (cp.Conversation.State, saved with the turn). Counting every stored message, not
// only the dialogue, makes messages fold before they can leave the loaded window.
// Only dialogue is summarized; other records (artifact revisions) are just passed
// over, their content lives in the workflow state. A summarizer failure is logged and
// the turn goes on with the longer history. Usage is added to the state's totals.
func (c Compactor) Compact(ctx context.Context, log *slog.Logger, cp *conversation.Checkpoint) {
	st := &cp.Conversation.State
	live := cp.Messages[:0:0]
	for _, m := range cp.Messages {
		if m.Seq > st.SummaryThroughSeq {
			live = append(live, m)
		}
	}
	cp.Messages = live
	if c.Summarizer == nil || len(live) < 2 ||
		(estimateTokens(Dialogue(live)) <= c.Tokens && len(live) <= c.Messages*3/4) {
		return
	}
	half := live[:len(live)/2]
	if fold := Dialogue(half); len(fold) > 0 {
		r := conversation.SummaryRequest{Previous: st.Summary, Messages: fold}
		if st.Workflow != nil {
			r.Workflow, r.Locale = st.Workflow.Name, st.Workflow.Locale
		}
		summary, u, err := c.Summarizer.Summarize(ctx, r)
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

// Dialogue returns the messages of msgs that are part of the conversation (user,
// assistant and earlier thread context), leaving out records such as artifact
// revisions.
func Dialogue(msgs []conversation.Message) []conversation.Message {
	out := make([]conversation.Message, 0, len(msgs))
	for _, m := range msgs {
		switch m.Role {
		case conversation.RoleUser, conversation.RoleAssistant, conversation.RoleContext:
			out = append(out, m)
		}
	}
	return out
}

// ClipAll returns msgs with every text clipped to n characters (clip).
func ClipAll(msgs []conversation.Message, n int) []conversation.Message {
	for i := range msgs {
		msgs[i].Text = Clip(msgs[i].Text, n)
	}
	return msgs
}

// Clip shortens text to at most n characters (runes), noting how much was left out.
func Clip(text string, n int) string {
	return textcut.Noted(text, n, func(kept, total int) string {
		return fmt.Sprintf("\n[… message clipped: the first %d of %d characters are shown]", kept, total)
	})
}
