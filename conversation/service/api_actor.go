package service

import (
	"regexp"
	"unicode"

	"github.com/threadwright/threadwright/conversation"
)

// apiMention matches the mention of an HTTP API token's actor ("<@api:ci-bot>"),
// which the thread's texts name as they name a person (<@U…>).
var apiMention = regexp.MustCompile(`<@` + conversation.APIActorPrefix + `([A-Za-z0-9._-]+)>`)

// apiActors rewrites the mentions of API tokens in s, which Slack cannot show, into
// the token's name and the door it came through: "Approved by <@api:ci-bot>." reads
// "Approved by ci-bot (via API).", and in a Russian text "ci-bot (через API)".
func apiActors(s string) string {
	if !apiMention.MatchString(s) {
		return s
	}
	via := "$1 (via API)"
	for _, r := range s {
		if unicode.Is(unicode.Cyrillic, r) {
			via = "$1 (через API)"
			break
		}
	}
	return apiMention.ReplaceAllString(s, via)
}
