package render

import (
	"fmt"
	"strings"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/internal/textcut"
)

// StopCard is the progress card, in lang: status and a Stop button for the turn of
// input inputID.
func StopCard(lang string, key conversation.Key, inputID, status string) conversation.Card {
	return conversation.Card{Text: status, Blocks: []conversation.Block{{Kind: conversation.BlockContext, Text: "⏳ " + status}, stopBlock(lang, key, inputID)}}
}

// stopBlock is the Stop button, in lang, for the turn of input inputID (also the
// first block of a stream that shows tasks).
func stopBlock(lang string, key conversation.Key, inputID string) conversation.Block {
	return conversation.Block{Kind: conversation.BlockActions, Buttons: []conversation.Button{{Label: Tr(lang, "stop"), Style: "danger",
		Action: conversation.Action{Name: conversation.ActionStop, Channel: key.ChannelID, ThreadTS: key.ThreadTS, Arg: inputID}}}}
}

// StreamStopCard is the first block of a streamed answer that shows tasks: Stop, in
// lang, for the turn of input inputID.
func StreamStopCard(lang string, key conversation.Key, inputID string) conversation.Card {
	return conversation.Card{Blocks: []conversation.Block{stopBlock(lang, key, inputID)}}
}

// DoneNote closes the progress message of a finished turn, in lang: the tools it
// used (their names), or that it is done.
func DoneNote(lang string, tools []string) string {
	if len(tools) == 0 {
		return Tr(lang, "progress.done")
	}
	return Tr(lang, "progress.used", strings.Join(tools, ", "))
}

// StoppedNote is the reply of a stopped turn, in lang.
func StoppedNote(lang string, by conversation.Stopped) string {
	if by.NewMessage {
		return Tr(lang, "stopped.newer")
	}
	return Tr(lang, "stopped.by", by.By)
}

// The words of the secondary scope check's rejection (outOfScopeReply), added to the
// catalogs of i18n.go.
func init() {
	for lang, words := range map[string]map[string]string{
		"en": {
			"progress.done":       "✓ Done",
			"progress.used":       "✓ Used %s",
			"progress.stopped":    "⏹ Stopped.",
			"progress.restarting": "⏸ Interrupted by a restart; I'll pick this up again in a moment.",
			"progress.confirm":    "⏸ Waiting for <@%s> to confirm `%s`",
			"stopped.newer":       "Stopped: a newer message arrived, so I'm answering that one instead.",
			"stopped.by":          "Stopped at <@%s>'s request. Nothing else was done; ask again when you're ready.",
			"out_of_scope.intro":  "I can't help with these, because they are outside what I'm set up for:",
			"out_of_scope.outro":  "I've set them aside, so later questions won't refer to them.",
		},
		"ru": {
			"progress.done":       "✓ Готово",
			"progress.used":       "✓ Использовано: %s",
			"progress.stopped":    "⏹ Остановлено.",
			"progress.restarting": "⏸ Прервано перезапуском; продолжу через минуту.",
			"progress.confirm":    "⏸ Жду, пока <@%s> подтвердит `%s`",
			"stopped.newer":       "Остановлено: пришло более новое сообщение, отвечаю на него.",
			"stopped.by":          "Остановлено по просьбе <@%s>. Больше ничего не сделано; спросите снова, когда будете готовы.",
			"out_of_scope.intro":  "С этим я помочь не могу: это выходит за рамки того, для чего я настроен:",
			"out_of_scope.outro":  "Я отложил их в сторону, так что следующие вопросы не будут к ним относиться.",
		},
	} {
		for k, v := range words {
			catalogs[lang][k] = v
		}
	}
}

// OutOfScopeReply is the rejection, in lang (a catalog language), that names the
// items a tool or the result classifier marked out of scope, each with its reason.
func OutOfScopeReply(lang string, items []conversation.Entity) string {
	var b strings.Builder
	b.WriteString(Tr(lang, "out_of_scope.intro"))
	for _, e := range items {
		b.WriteString("\n• ")
		if e.Title != "" {
			b.WriteString("*" + e.Title + "* ")
		}
		b.WriteString("(`" + e.ID + "`)")
		if e.Reason != "" {
			b.WriteString(": " + e.Reason)
		}
	}
	b.WriteString("\n" + Tr(lang, "out_of_scope.outro"))
	return b.String()
}

// CutTask returns text scrubbed by redact, then cut to n characters, ending with "…"
// when cut.
func CutTask(redact func(string) string, text string, n int) string {
	return textcut.Ellipsis(redact(text), n, nil)
}

// MessagesTabGreeting is the greeting of the agent view's Messages tab (docs/tools.md,
// "Agent view"): greeting, then each suggested prompt on a line of its own, its title
// in bold and the message to send. Slack has no suggested prompts outside a thread,
// so they are part of the text.
func MessagesTabGreeting(greeting string, prompts []conversation.SuggestedPrompt) string {
	var b strings.Builder
	b.WriteString(greeting)
	for _, p := range prompts {
		fmt.Fprintf(&b, "\n• *%s* — %s", strings.TrimSpace(p.Title), strings.TrimSpace(p.Message))
	}
	return b.String()
}
