package service

import (
	"github.com/threadwright/threadwright/conversation"
)

// commandFailedCard is the ephemeral answering a channel command in that failed
// for good: text (channelCommandFailed) and a Retry button.
func commandFailedCard(lang, text string, in conversation.Input) conversation.Card {
	act := conversation.Action{Name: conversation.ActionRetryCommand, Channel: in.Key.ChannelID, ThreadTS: in.ID, Arg: in.Command.Line}
	return conversation.Card{Text: text, Blocks: []conversation.Block{
		{Kind: conversation.BlockSection, Text: text},
		{Kind: conversation.BlockActions, Buttons: []conversation.Button{{Label: tr(lang, "retry"), Style: "primary", Action: act}}},
	}}
}
