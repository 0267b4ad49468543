package render

import (
	"fmt"
	"strings"

	"github.com/threadwright/threadwright/conversation"
)

// Which asks which of a user's runs a channel command (its name and line) means:
// a button each, labelled with the run's title and subject (Run.Label), and the
// runs listed with where each stands and a link to its thread.
func Which(lang string, runs []Run, name, line string) conversation.Card {
	var buttons []conversation.Button
	for _, r := range runs {
		buttons = append(buttons, conversation.Button{
			Label:  r.Label(),
			Action: conversation.Action{Name: conversation.ActionCommand, Channel: r.Key.ChannelID, ThreadTS: r.Key.ThreadTS, Arg: line},
		})
	}
	text := Runs(lang, Tr(lang, "which.run", name), runs)
	return conversation.Card{Text: text, Blocks: []conversation.Block{{Kind: conversation.BlockSection, Text: text}, {Kind: conversation.BlockActions, Buttons: buttons}}}
}

// CommandUsage lists the subcommands in lang ("en" or "ru"), each with what it does
// and an example, for help and for an unknown subcommand.
func CommandUsage(lang string) string {
	var b strings.Builder
	for _, c := range conversation.Commands {
		what := c.What
		if lang == "ru" {
			what = c.WhatRu
		}
		fmt.Fprintf(&b, "• `%s` — %s. %s `/threadwright %s`\n", c.Usage, what, Tr(lang, "help.example"), c.Example)
	}
	b.WriteString(Tr(lang, "help.where"))
	return b.String()
}

// CommandFailedCard is the ephemeral answering a channel command in that failed
// for good: text (channelCommandFailed) and a Retry button.
func CommandFailedCard(lang, text string, in conversation.Input) conversation.Card {
	act := conversation.Action{Name: conversation.ActionRetryCommand, Channel: in.Key.ChannelID, ThreadTS: in.ID, Arg: in.Command.Line}
	return conversation.Card{Text: text, Blocks: []conversation.Block{
		{Kind: conversation.BlockSection, Text: text},
		{Kind: conversation.BlockActions, Buttons: []conversation.Button{{Label: Tr(lang, "retry"), Style: "primary", Action: act}}},
	}}
}
