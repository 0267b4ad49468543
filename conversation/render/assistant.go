package render

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/internal/textcut"
)

// StopCard is the progress card: status and a Stop button for the turn of input
// inputID.
func StopCard(key conversation.Key, inputID, status string) conversation.Card {
	return conversation.Card{Text: status, Blocks: []conversation.Block{{Kind: conversation.BlockContext, Text: "⏳ " + status}, stopBlock(key, inputID)}}
}

// stopBlock is the Stop button for the turn of input inputID (also the first block
// of a stream that shows tasks).
func stopBlock(key conversation.Key, inputID string) conversation.Block {
	return conversation.Block{Kind: conversation.BlockActions, Buttons: []conversation.Button{{Label: "Stop", Style: "danger",
		Action: conversation.Action{Name: conversation.ActionStop, Channel: key.ChannelID, ThreadTS: key.ThreadTS, Arg: inputID}}}}
}

// StreamStopCard is the first block of a streamed answer that shows tasks: Stop for
// the turn of input inputID.
func StreamStopCard(key conversation.Key, inputID string) conversation.Card {
	return conversation.Card{Blocks: []conversation.Block{stopBlock(key, inputID)}}
}

// DoneNote closes the progress message of a finished turn.
func DoneNote(tools []string) string {
	if len(tools) == 0 {
		return "✓ Done"
	}
	return "✓ Used " + strings.Join(tools, ", ")
}

// StoppedNote is the reply of a stopped turn.
func StoppedNote(by conversation.Stopped) string {
	if by.NewMessage {
		return "Stopped: a newer message arrived, so I'm answering that one instead."
	}
	return fmt.Sprintf("Stopped at <@%s>'s request. Nothing else was done; ask again when you're ready.", by.By)
}

// The words of the secondary scope check's rejection (outOfScopeReply), added to the
// catalogs of i18n.go.
func init() {
	for lang, words := range map[string]map[string]string{
		"en": {
			"out_of_scope.intro": "I can't help with these, because they are outside what I'm set up for:",
			"out_of_scope.outro": "I've set them aside, so later questions won't refer to them.",
		},
		"ru": {
			"out_of_scope.intro": "С этим я помочь не могу: это выходит за рамки того, для чего я настроен:",
			"out_of_scope.outro": "Я отложил их в сторону, так что следующие вопросы не будут к ним относиться.",
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

// MaxShownArguments bounds the characters of a call's arguments shown on its card.
const MaxShownArguments = 1500

// ApprovalCard is the confirmation card of ap: the tool, why it needs confirmation,
// its arguments in a code block, and Approve / Deny (always the last block).
func ApprovalCard(key conversation.Key, ap *conversation.ToolApproval) conversation.Card {
	name := ap.Tool.Name
	why := "This tool can change things outside this thread."
	switch ap.Tool.Reason {
	case conversation.ApprovalDestructive:
		why = "This tool may delete or overwrite data."
	case conversation.ApprovalAfterUntrusted:
		why = "Content from outside (a web page or search results) was read while answering, so a tool that changes things needs your go-ahead: the request to run it may have come from that content, not from you."
	}
	action := func(n conversation.ActionName) conversation.Action {
		return conversation.Action{Name: n, Channel: key.ChannelID, ThreadTS: key.ThreadTS, Arg: ap.ID}
	}
	return conversation.Card{
		Text: fmt.Sprintf("Confirm a tool call: %s", name),
		Blocks: []conversation.Block{
			{Kind: conversation.BlockSection, Text: fmt.Sprintf("*<@%s>, may I run `%s`?*\n%s", ap.UserID, name, why)},
			{Kind: conversation.BlockSection, Text: "```\n" + ShownArguments(ap.Tool.Arguments) + "\n```"},
			{Kind: conversation.BlockContext, Text: fmt.Sprintf("Only <@%s> can decide. A new message in this thread cancels this request.", ap.UserID)},
			{Kind: conversation.BlockActions, Buttons: []conversation.Button{
				{Label: "Approve", Style: "primary", Action: action(conversation.ActionApproveTool)},
				{Label: "Deny", Style: "danger", Action: action(conversation.ActionDenyTool)},
			}},
		},
	}
}

// ShownArguments renders a call's arguments for a card's code block: indented JSON
// (as written when it is not JSON), cut at maxShownArguments characters, with
// Slack's control characters escaped (&, <, >: no mention or link can form) and no
// "```" to end the block early.
func ShownArguments(args string) string {
	var v any
	if json.Unmarshal([]byte(args), &v) == nil {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false) // escaped below, for Slack
		enc.SetIndent("", "  ")
		if enc.Encode(v) == nil {
			args = strings.TrimSuffix(b.String(), "\n")
		}
	}
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	if utf8.RuneCountInString(args) > MaxShownArguments {
		args = string([]rune(args)[:MaxShownArguments]) + "\n… (cut)"
	}
	args = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(args)
	for strings.Contains(args, "```") { // a longer run of backticks leaves another
		args = strings.ReplaceAll(args, "```", "`\u200b``")
	}
	return args
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
