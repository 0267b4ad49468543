package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/internal/textcut"
)

// The confirmation card of a tool call (docs/tools.md, "Tool policy"): it shows
// everything it approves. Arguments that fit are shown whole; longer ones as one
// line per top-level key, each value cut on its own, so no key hides behind another's
// long value; the whole arguments go with the card as a file (ArgumentsFile). When
// not even every key fits, the card has no Approve.

// MaxShownArguments bounds the characters of the arguments' code block on a card,
// after Slack's escaping, below Block Kit's 3,000 for a section's text.
const MaxShownArguments = 2800

// MaxShownValue bounds the characters of one argument's value, as JSON, when the
// arguments are shown one key a line; maxShownKey bounds its name.
const (
	MaxShownValue = 200
	maxShownKey   = 80
)

// maxWholeArguments bounds the characters of arguments shown whole, as indented JSON.
const maxWholeArguments = 1500

// Arguments is how a call's arguments are shown on its card (ShowArguments).
type Arguments struct {
	// Text is the code block's content, escaped for Slack.
	Text string
	// Complete is true when Text shows the arguments whole: no value or name is cut.
	Complete bool
	// Fits is true when every top-level key is in Text: the call may be approved
	// from the card (with the file for what is cut).
	Fits bool
}

// ShowArguments renders a call's arguments for a card's code block: indented JSON
// when it is short (as written when it is not JSON); otherwise, for a JSON object,
// one line per top-level key, sorted, `"key": value` with the value as compact JSON
// cut to MaxShownValue characters ("… (N more characters)"); anything else cut at
// maxWholeArguments. Slack's control characters are escaped (&, <, >: no mention or
// link can form), no "```" can end the block early, and Text has at most
// MaxShownArguments characters.
func ShowArguments(args string) Arguments {
	whole := args
	var v any
	if json.Unmarshal([]byte(args), &v) == nil {
		whole = encodeJSON(v, "  ")
	}
	if strings.TrimSpace(whole) == "" {
		whole = "{}"
	}
	if text := slackCode(whole); utf8.RuneCountInString(whole) <= maxWholeArguments && utf8.RuneCountInString(text) <= MaxShownArguments {
		return Arguments{Text: text, Complete: true, Fits: true}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return Arguments{Text: slackCode(textcut.Runes(whole, maxWholeArguments) + "\n… (cut)")}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var lines []string
	size := 0
	for i, k := range keys {
		line := slackCode(encodeJSON(textcut.Ellipsis(k, maxShownKey, nil), "") + ": " + cutValue(encodeJSON(obj[k], "")))
		more := slackCode(fmt.Sprintf("… and %d more keys, not shown", len(keys)-i))
		if size+utf8.RuneCountInString(line)+1+utf8.RuneCountInString(more) > MaxShownArguments {
			return Arguments{Text: strings.Join(append(lines, more), "\n")}
		}
		lines = append(lines, line)
		size += utf8.RuneCountInString(line) + 1
	}
	return Arguments{Text: strings.Join(lines, "\n"), Fits: true}
}

// ShownArguments is ShowArguments(args).Text.
func ShownArguments(args string) string { return ShowArguments(args).Text }

// encodeJSON encodes v without HTML escaping (escaped for Slack later), indented by
// indent ("" for compact).
func encodeJSON(v any, indent string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	_ = enc.Encode(v) // a decoded JSON value always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// cutValue cuts a value's JSON to MaxShownValue characters, saying how many more
// there are.
func cutValue(s string) string {
	n := utf8.RuneCountInString(s)
	if n <= MaxShownValue {
		return s
	}
	return textcut.Runes(s, MaxShownValue) + fmt.Sprintf(" … (%d more characters)", n-MaxShownValue)
}

// slackCode escapes s for a code block in mrkdwn: &, < and > (no mention or link can
// form), and no "```" to end the block early.
func slackCode(s string) string {
	s = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
	for strings.Contains(s, "```") { // a longer run of backticks leaves another
		s = strings.ReplaceAll(s, "```", "`\u200b``")
	}
	return s
}

// ArgumentsFile is the file that goes with a card whose arguments are not shown
// whole (Arguments.Complete false): the arguments as indented JSON (as written when
// they are not JSON), named for the tool.
func ArgumentsFile(p conversation.PendingTool) conversation.File {
	content := p.Arguments
	var v any
	if json.Unmarshal([]byte(p.Arguments), &v) == nil {
		content = encodeJSON(v, "  ")
	}
	return conversation.File{
		Name: p.Name + "-arguments.json", Title: "Arguments of " + p.Name, Content: []byte(content),
		Comment: fmt.Sprintf("All the arguments of `%s`, as it would be called.", p.Name),
	}
}

// ApprovalCard is the confirmation card of ap: the tool, why it needs confirmation,
// its arguments in a code block (ShowArguments), and Approve / Deny (always the last
// block). Arguments not shown whole are in the file that goes with it
// (ArgumentsFile); when not every key fits, there is Deny alone and the card says
// why and what to do.
func ApprovalCard(key conversation.Key, ap *conversation.ToolApproval) conversation.Card {
	why := "This tool can change things outside this thread."
	switch ap.Tool.Reason {
	case conversation.ApprovalDestructive:
		why = "This tool may delete or overwrite data."
	case conversation.ApprovalAfterUntrusted:
		why = "Content from outside (a web page or search results) was read while answering, so a tool that changes things needs your go-ahead: the request to run it may have come from that content, not from you."
	}
	return approvalCard(key, ap, why, "A new message in this thread cancels this request.")
}

// WriteApprovalCard is the confirmation card of a workflow write's tool call
// (conversation.WriteApproval), as ApprovalCard, title the artifact's: the workflow
// waits for the decision, which a new message does not cancel.
func WriteApprovalCard(key conversation.Key, wa *conversation.WriteApproval, title string) conversation.Card {
	why := fmt.Sprintf("*%s* is being written, and this tool can change things outside this thread.", escapeName(title))
	switch wa.Tool.Reason {
	case conversation.ApprovalDestructive:
		why = fmt.Sprintf("*%s* is being written, and this tool may delete or overwrite data.", escapeName(title))
	case conversation.ApprovalAfterUntrusted:
		why = fmt.Sprintf("*%s* is being written from content from outside the organization (a fetched page, search results), so a tool that changes things needs your go-ahead: the request to run it may have come from that content, not from you.", escapeName(title))
	}
	return approvalCard(key, &wa.ToolApproval, why, "The workflow waits for this decision.")
}

// ClosedApprovalCard is card, an approval card, without its buttons and with note
// (who decided, or why nothing ran) in their place.
func ClosedApprovalCard(card conversation.Card, note string) conversation.Card {
	card.Blocks = append(card.Blocks[:len(card.Blocks)-1:len(card.Blocks)-1], conversation.Block{Kind: conversation.BlockContext, Text: note})
	return card
}

// What a person who clicks a confirmation card is told, only them, when the click
// runs nothing.
const (
	ApprovalNotCurrent = "This confirmation is no longer current, so nothing was run."
	ApprovalTooLarge   = "These arguments are too large to check on a card, so this call cannot be approved here, and nothing was run. Deny it, then ask for something smaller."
)

// ApprovalNotYours tells a clicker that only userID, who asked, may decide.
func ApprovalNotYours(userID string) string {
	return fmt.Sprintf("Sorry, only <@%s>, who asked, can approve or deny this.", userID)
}

// approvalCard is an approval card with why under its question and after its
// arguments the rule of who decides, then cancels.
func approvalCard(key conversation.Key, ap *conversation.ToolApproval, why, cancels string) conversation.Card {
	name := ap.Tool.Name
	action := func(n conversation.ActionName) conversation.Action {
		return conversation.Action{Name: n, Channel: key.ChannelID, ThreadTS: key.ThreadTS, Arg: ap.ID}
	}
	args := ShowArguments(ap.Tool.Arguments)
	note := fmt.Sprintf("Only <@%s> can decide. %s", ap.UserID, cancels)
	buttons := []conversation.Button{
		{Label: "Approve", Style: "primary", Action: action(conversation.ActionApproveTool)},
		{Label: "Deny", Style: "danger", Action: action(conversation.ActionDenyTool)},
	}
	switch {
	case !args.Fits:
		note = "These arguments are too large to check on a card, so this call cannot be approved here; they are all in the file below. Deny it, then ask for something smaller, or do it yourself. " + note
		buttons = buttons[1:]
	case !args.Complete:
		note = "Long values are cut here; the file below has every argument in full. " + note
	}
	return conversation.Card{
		Text: fmt.Sprintf("Confirm a tool call: %s", name),
		Blocks: []conversation.Block{
			{Kind: conversation.BlockSection, Text: fmt.Sprintf("*<@%s>, may I run `%s`?*\n%s", ap.UserID, name, why)},
			{Kind: conversation.BlockSection, Text: "```\n" + args.Text + "\n```"},
			{Kind: conversation.BlockContext, Text: note},
			{Kind: conversation.BlockActions, Buttons: buttons},
		},
	}
}
