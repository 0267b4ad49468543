package render

import (
	"bytes"
	"encoding/json"
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
// MaxShownArguments characters. Its notes of what is cut are in lang, so Fits, which
// their length decides at the margin, is asked in the card's language.
func ShowArguments(lang, args string) Arguments {
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
		return Arguments{Text: slackCode(textcut.Runes(whole, maxWholeArguments) + "\n… (" + Tr(lang, "approval.cut_short") + ")")}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var lines []string
	size := 0
	for i, k := range keys {
		line := slackCode(encodeJSON(textcut.Ellipsis(k, maxShownKey, nil), "") + ": " + cutValue(lang, encodeJSON(obj[k], "")))
		more := slackCode("… " + Tr(lang, "approval.more_keys", len(keys)-i))
		if size+utf8.RuneCountInString(line)+1+utf8.RuneCountInString(more) > MaxShownArguments {
			return Arguments{Text: strings.Join(append(lines, more), "\n")}
		}
		lines = append(lines, line)
		size += utf8.RuneCountInString(line) + 1
	}
	return Arguments{Text: strings.Join(lines, "\n"), Fits: true}
}

// ShownArguments is ShowArguments("en", args).Text.
func ShownArguments(args string) string { return ShowArguments("en", args).Text }

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
func cutValue(lang, s string) string {
	n := utf8.RuneCountInString(s)
	if n <= MaxShownValue {
		return s
	}
	return textcut.Runes(s, MaxShownValue) + " … (" + Tr(lang, "approval.more_chars", n-MaxShownValue) + ")"
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

// ArgumentsFile is the file, in lang, that goes with a card whose arguments are not shown
// whole (Arguments.Complete false): the arguments as indented JSON (as written when
// they are not JSON), named for the tool.
func ArgumentsFile(lang string, p conversation.PendingTool) conversation.File {
	content := p.Arguments
	var v any
	if json.Unmarshal([]byte(p.Arguments), &v) == nil {
		content = encodeJSON(v, "  ")
	}
	return conversation.File{
		Name: p.Name + "-arguments.json", Title: Tr(lang, "approval.file_title", p.Name), Content: []byte(content),
		Comment: Tr(lang, "approval.file_comment", p.Name),
	}
}

// ApprovalCard is the confirmation card of ap, in lang: the tool, why it needs
// confirmation, its arguments in a code block (ShowArguments), and Approve / Deny
// (always the last block). Arguments not shown whole are in the file that goes with
// it (ArgumentsFile); when not every key fits, there is Deny alone and the card says
// why and what to do.
func ApprovalCard(lang string, key conversation.Key, ap *conversation.ToolApproval) conversation.Card {
	why := Tr(lang, "approval.why")
	switch ap.Tool.Reason {
	case conversation.ApprovalDestructive:
		why = Tr(lang, "approval.why_destructive")
	case conversation.ApprovalAfterUntrusted:
		why = Tr(lang, "approval.why_untrusted")
	}
	return approvalCard(lang, key, ap, why, Tr(lang, "approval.cancels"))
}

// WriteApprovalCard is the confirmation card of a workflow write's tool call
// (conversation.WriteApproval), as ApprovalCard, title the artifact's: the workflow
// waits for the decision, which a new message does not cancel.
func WriteApprovalCard(lang string, key conversation.Key, wa *conversation.WriteApproval, title string) conversation.Card {
	why := Tr(lang, "write_approval.why", escapeName(title))
	switch wa.Tool.Reason {
	case conversation.ApprovalDestructive:
		why = Tr(lang, "write_approval.why_destructive", escapeName(title))
	case conversation.ApprovalAfterUntrusted:
		why = Tr(lang, "write_approval.why_untrusted", escapeName(title))
	}
	return approvalCard(lang, key, &wa.ToolApproval, why, Tr(lang, "write_approval.waits"))
}

// ClosedApprovalCard is card, an approval card, without its buttons and with note
// (who decided, or why nothing ran) in their place.
func ClosedApprovalCard(card conversation.Card, note string) conversation.Card {
	card.Blocks = append(card.Blocks[:len(card.Blocks)-1:len(card.Blocks)-1], conversation.Block{Kind: conversation.BlockContext, Text: note})
	return card
}

// approvalCard is an approval card with why under its question and after its
// arguments the rule of who decides, then cancels.
func approvalCard(lang string, key conversation.Key, ap *conversation.ToolApproval, why, cancels string) conversation.Card {
	name := ap.Tool.Name
	action := func(n conversation.ActionName) conversation.Action {
		return conversation.Action{Name: n, Channel: key.ChannelID, ThreadTS: key.ThreadTS, Arg: ap.ID}
	}
	args := ShowArguments(lang, ap.Tool.Arguments)
	note := Tr(lang, "approval.only", ap.UserID) + " " + cancels
	buttons := []conversation.Button{
		{Label: Tr(lang, "approve"), Style: "primary", Action: action(conversation.ActionApproveTool)},
		{Label: Tr(lang, "approval.deny"), Style: "danger", Action: action(conversation.ActionDenyTool)},
	}
	switch {
	case !args.Fits:
		note = Tr(lang, "approval.too_large") + " " + note
		buttons = buttons[1:]
	case !args.Complete:
		note = Tr(lang, "approval.cut") + " " + note
	}
	return conversation.Card{
		Text: Tr(lang, "approval.text", name),
		Blocks: []conversation.Block{
			{Kind: conversation.BlockSection, Text: Tr(lang, "approval.ask", ap.UserID, name) + "\n" + why},
			{Kind: conversation.BlockSection, Text: "```\n" + args.Text + "\n```"},
			{Kind: conversation.BlockContext, Text: note},
			{Kind: conversation.BlockActions, Buttons: buttons},
		},
	}
}

// The words of the tool confirmation (ApprovalCard and what its clicks answer),
// added to the catalogs of i18n.go.
func init() {
	for lang, words := range map[string]map[string]string{
		"en": {
			"approval.cut_short":             "cut",
			"approval.more_keys":             "and %d more keys, not shown",
			"approval.more_chars":            "%d more characters",
			"approval.text":                  "Confirm a tool call: %s",
			"approval.ask":                   "*<@%s>, may I run `%s`?*",
			"approval.why":                   "This tool can change things outside this thread.",
			"approval.why_destructive":       "This tool may delete or overwrite data.",
			"approval.why_untrusted":         "Content from outside (a web page or search results) was read while answering, so a tool that changes things needs your go-ahead: the request to run it may have come from that content, not from you.",
			"approval.only":                  "Only <@%s> can decide.",
			"approval.cancels":               "A new message in this thread cancels this request.",
			"write_approval.why":             "*%s* is being written, and this tool can change things outside this thread.",
			"write_approval.why_destructive": "*%s* is being written, and this tool may delete or overwrite data.",
			"write_approval.why_untrusted":   "*%s* is being written from content from outside the organization (a fetched page, search results), so a tool that changes things needs your go-ahead: the request to run it may have come from that content, not from you.",
			"write_approval.waits":           "The workflow waits for this decision.",
			"write_approval.denied":          "✗ Denied by <@%s>: not run. The text is written without it.",
			"write_approval.begun":           "⚠ Approved earlier: the call began and may or may not have taken effect, so it was not run again. Closed by <@%s>.",
			"write_approval.rewritten":       "⊘ Not run: the text is being written again.",
			"write_approval.cancelled":       "⊘ Not run: the workflow was cancelled.",
			"write_approval.later":           "⊘ Not run: another text is being written first; this one asks again when it is written.",
			"write_approval.outdated":        "⊘ Not run: what this text is written from has changed since, so this request is no longer current.",
			"approval.too_large":             "These arguments are too large to check on a card, so this call cannot be approved here; they are all in the file below. Deny it, then ask for something smaller, or do it yourself.",
			"approval.cut":                   "Long values are cut here; the file below has every argument in full.",
			"approval.deny":                  "Deny",
			"approval.approved":              "✓ Approved by <@%s>.",
			"approval.denied":                "✗ Denied by <@%s>: not run.",
			"approval.voided":                "⊘ Not run: a newer message arrived before anyone decided.",
			"approval.not_current":           "This confirmation is no longer current, so nothing was run.",
			"approval.not_yours":             "Sorry, only <@%s>, who asked, can approve or deny this.",
			"approval.cannot_approve":        "These arguments are too large to check on a card, so this call cannot be approved here, and nothing was run. Deny it, then ask for something smaller.",
			"approval.not_shown":             "I wanted to run `%s`, which needs your confirmation, but I could not show the buttons. Please ask again.",
			"approval.file_title":            "Arguments of %s",
			"approval.file_comment":          "All the arguments of `%s`, as it would be called.",
		},
		"ru": {
			"approval.cut_short":             "обрезано",
			"approval.more_keys":             "и ещё ключей: %d, не показаны",
			"approval.more_chars":            "ещё символов: %d",
			"approval.text":                  "Подтвердите вызов инструмента: %s",
			"approval.ask":                   "*<@%s>, можно запустить `%s`?*",
			"approval.why":                   "Этот инструмент может что-то изменить за пределами этой ветки.",
			"approval.why_destructive":       "Этот инструмент может удалить или перезаписать данные.",
			"approval.why_untrusted":         "Во время ответа было прочитано содержимое извне (веб-страница или результаты поиска), поэтому инструменту, который что-то меняет, нужно ваше согласие: просьба запустить его могла прийти из этого содержимого, а не от вас.",
			"approval.only":                  "Решить может только <@%s>.",
			"approval.cancels":               "Новое сообщение в этой ветке отменяет этот запрос.",
			"write_approval.why":             "Пишется *%s*, и этот инструмент может что-то изменить за пределами этой ветки.",
			"write_approval.why_destructive": "Пишется *%s*, и этот инструмент может удалить или перезаписать данные.",
			"write_approval.why_untrusted":   "*%s* пишется по содержимому извне организации (загруженная страница, результаты поиска), поэтому инструменту, который что-то меняет, нужно ваше согласие: просьба запустить его могла прийти из этого содержимого, а не от вас.",
			"write_approval.waits":           "Процесс ждёт этого решения.",
			"write_approval.denied":          "✗ Отклонил(а) <@%s>: не запущено. Текст пишется без этого.",
			"write_approval.begun":           "⚠ Подтверждено раньше: вызов начался и мог сработать или нет, поэтому повторно не запущен. Закрыл(а) <@%s>.",
			"write_approval.rewritten":       "⊘ Не запущено: текст пишется заново.",
			"write_approval.cancelled":       "⊘ Не запущено: процесс отменён.",
			"write_approval.later":           "⊘ Не запущено: сначала пишется другой текст; этот спросит снова, когда дойдёт до него.",
			"write_approval.outdated":        "⊘ Не запущено: то, из чего пишется этот текст, с тех пор изменилось, поэтому этот запрос уже неактуален.",
			"approval.too_large":             "Эти аргументы слишком велики, чтобы проверить их на карточке, поэтому этот вызов здесь не подтвердить; все они в файле ниже. Отклоните его и попросите что-нибудь поменьше или сделайте это сами.",
			"approval.cut":                   "Длинные значения здесь обрезаны; в файле ниже все аргументы целиком.",
			"approval.deny":                  "Отклонить",
			"approval.approved":              "✓ Подтвердил(а) <@%s>.",
			"approval.denied":                "✗ Отклонил(а) <@%s>: не запущено.",
			"approval.voided":                "⊘ Не запущено: новое сообщение пришло раньше, чем кто-то решил.",
			"approval.not_current":           "Это подтверждение уже неактуально, поэтому ничего не запущено.",
			"approval.not_yours":             "Извините, подтвердить или отклонить это может только <@%s>, который(ая) спрашивал(а).",
			"approval.cannot_approve":        "Эти аргументы слишком велики, чтобы проверить их на карточке, поэтому этот вызов здесь не подтвердить, и ничего не запущено. Отклоните его и попросите что-нибудь поменьше.",
			"approval.not_shown":             "Я хотел запустить `%s`, для этого нужно ваше подтверждение, но не смог показать кнопки. Спросите, пожалуйста, ещё раз.",
			"approval.file_title":            "Аргументы %s",
			"approval.file_comment":          "Все аргументы `%s`, с которыми он был бы вызван.",
		},
	} {
		for k, v := range words {
			catalogs[lang][k] = v
		}
	}
}
