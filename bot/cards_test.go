package bot_test

import (
	"fmt"
	"strings"

	"github.com/threadwright/threadwright/conversation"
)

// Realistic cards, shaped like the ones the workflow engine posts
// (docs/architecture.md, "Workflow machine"), for the golden files and the emulator
// tests.

const (
	cardChannel = "C0GENERAL"
	cardThread  = "1700000000.000100"
)

func action(name conversation.ActionName, artifact string, rev int, arg string) conversation.Action {
	return conversation.Action{Name: name, Channel: cardChannel, ThreadTS: cardThread, Artifact: artifact, Rev: rev, Arg: arg}
}

// artifactMenu is the overflow menu of an artifact message.
func artifactMenu(artifact string, rev int) []conversation.Button {
	return []conversation.Button{
		{Label: "Restart", Action: action(conversation.ActionRestart, artifact, rev, "")},
		{Label: "Edit…", Action: action(conversation.ActionEdit, artifact, rev, ""),
			Modal: &conversation.Modal{Title: "Edit", Label: "What should change?", Submit: "Edit"}},
		{Label: "Status", Action: action(conversation.ActionCommand, "", 0, "status")},
	}
}

// optionsCard is the options of a choice-mode artifact: one button per option and
// "Regenerate options".
func optionsCard() conversation.Card {
	options := []struct{ label, text string }{
		{"A", "Small teams lose decisions in long Slack threads: nobody can find what was agreed, so work is redone."},
		{"B", "Product briefs take two weeks because drafts circulate by e-mail and feedback arrives out of order."},
		{"C", "Grant applications miss deadlines when sections written by different people contradict each other."},
	}
	c := conversation.Card{Text: "Problem: 3 options to choose from"}
	c.Blocks = append(c.Blocks, conversation.Block{Kind: conversation.BlockHeader, Text: "Problem — choose an option"})
	var buttons []conversation.Button
	for _, o := range options {
		c.Blocks = append(c.Blocks, conversation.Block{Kind: conversation.BlockSection, Text: "*" + o.label + ".* " + o.text})
		buttons = append(buttons, conversation.Button{Label: o.label, Action: action(conversation.ActionPick, "problem", 1, o.label)})
	}
	buttons = append(buttons, conversation.Button{Label: "Regenerate options", Action: action(conversation.ActionRegenerate, "problem", 1, "")})
	c.Blocks = append(c.Blocks,
		conversation.Block{Kind: conversation.BlockActions, Buttons: buttons, Menu: artifactMenu("problem", 1)},
		conversation.Block{Kind: conversation.BlockContext, Text: "Or reply in this thread to pick or edit one, for example _B, but shorter_."},
	)
	return c
}

// artifactCard is a written artifact with its evaluation, Approve and Request
// changes (a modal).
func artifactCard(text string) conversation.Card {
	return conversation.Card{
		Text: "Budget is ready for review",
		Blocks: []conversation.Block{
			{Kind: conversation.BlockHeader, Text: "Budget"},
			{Kind: conversation.BlockSection, Text: text},
			{Kind: conversation.BlockDivider},
			{Kind: conversation.BlockContext, Text: "✅ *Itemised* — every cost has an amount and a reason\n❌ *Within limit* — the total, €148,000, exceeds the €120,000 cap"},
			{Kind: conversation.BlockActions,
				Buttons: []conversation.Button{
					{Label: "Approve", Style: "primary", Action: action(conversation.ActionApprove, "budget", 4, ""),
						Confirm: &conversation.Confirm{Title: "Approve the budget?", Text: "Artifacts that depend on it will be written next.", Yes: "Approve", No: "Not yet"}},
					{Label: "Request changes", Action: action(conversation.ActionRequestChanges, "budget", 4, ""),
						Modal: &conversation.Modal{Title: "Request changes", Label: "What should change in the budget?", Placeholder: "Cut travel by half; add a line for audits", Submit: "Send"}},
				},
				Menu: artifactMenu("budget", 4)},
		},
	}
}

const budgetText = "*Personnel* — €92,000: one researcher for 18 months (€4,500/month) and a part-time coordinator.\n" +
	"*Equipment* — €31,000: two field sensors and a data logger.\n" +
	"*Travel* — €25,000: six site visits and one conference.\n\n*Total*: €148,000."

// staleCard lists the artifacts made stale by an edit, each with Keep and
// Regenerate with guidance (a modal).
func staleCard() conversation.Card {
	stale := []struct{ id, title, why string }{
		{"budget", "Budget", "depends on *Methodology*, which was edited"},
		{"timeline", "Timeline", "depends on *Methodology*, which was edited"},
		{"conclusion", "Conclusion", "depends on *Budget* and *Timeline*"},
	}
	c := conversation.Card{Text: "3 artifacts are stale after the edit of Methodology"}
	c.Blocks = append(c.Blocks,
		conversation.Block{Kind: conversation.BlockHeader, Text: "Stale after the edit of Methodology"},
		conversation.Block{Kind: conversation.BlockContext, Text: "Keep an artifact as it is, or regenerate it with guidance."},
	)
	for i, s := range stale {
		c.Blocks = append(c.Blocks,
			conversation.Block{Kind: conversation.BlockSection, Text: "*" + s.title + "* " + s.why},
			conversation.Block{Kind: conversation.BlockActions, Buttons: []conversation.Button{
				{Label: "Keep", Action: action(conversation.ActionKeep, s.id, i+2, "")},
				{Label: "Regenerate with guidance", Style: "primary", Action: action(conversation.ActionRegenerateStale, s.id, i+2, ""),
					Modal: &conversation.Modal{Title: "Regenerate " + s.title, Label: "Guidance for the new " + strings.ToLower(s.title), Submit: "Regenerate"}},
			}},
		)
	}
	return c
}

// longText returns about n characters of paragraphs of varied length.
func longText(n int) string {
	var b strings.Builder
	for i := 1; b.Len() < n; i++ {
		fmt.Fprintf(&b, "*%d.* ", i)
		for j := 0; j < 3+i%7; j++ {
			b.WriteString("The consortium will measure soil moisture at twelve sites and publish the data openly every quarter. ")
		}
		b.WriteString("\n\n")
	}
	return strings.TrimSpace(b.String()[:n])
}

// russianCard has long labels and texts in Cyrillic.
func russianCard() conversation.Card {
	long := strings.Repeat("Очень длинная кнопка ", 6)
	return conversation.Card{
		Text: "Бюджет готов к проверке",
		Blocks: []conversation.Block{
			{Kind: conversation.BlockHeader, Text: strings.Repeat("Заголовок раздела бюджета ", 8)},
			{Kind: conversation.BlockSection, Text: "Расходы на персонал: 92 000 €."},
			{Kind: conversation.BlockActions, Buttons: []conversation.Button{
				{Label: "Утвердить", Style: "primary", Action: action(conversation.ActionApprove, "budget", 4, "")},
				{Label: long, Action: action(conversation.ActionRequestChanges, "budget", 4, ""),
					Modal: &conversation.Modal{Title: "Запросить изменения в бюджете", Label: "Что изменить?", Submit: "Отправить изменения", Placeholder: "Например: сократить командировки"}},
			}, Menu: []conversation.Button{
				{Label: "Перезапустить", Action: action(conversation.ActionRestart, "budget", 4, "")},
				{Label: "Изменить…", Action: action(conversation.ActionEdit, "budget", 4, ""),
					Modal: &conversation.Modal{Title: "Изменить бюджет", Label: "Что изменить в бюджете?", Placeholder: strings.Repeat("Пример ", 20), Submit: "Изменить"}},
				{Label: "Отменить процесс", Style: "danger", Action: action(conversation.ActionCommand, "", 0, "cancel"),
					Confirm: &conversation.Confirm{Title: "Отменить?", Text: "Процесс будет остановлен.", Yes: "Да", No: "Нет"}},
			}},
		},
	}
}
