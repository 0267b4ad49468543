package service

import (
	"strings"

	"github.com/threadwright/threadwright/conversation"
)

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

// outOfScopeReply is the rejection, in lang (a catalog language), that names the
// items a tool or the result classifier marked out of scope, each with its reason.
func outOfScopeReply(lang string, items []conversation.Entity) string {
	var b strings.Builder
	b.WriteString(tr(lang, "out_of_scope.intro"))
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
	b.WriteString("\n" + tr(lang, "out_of_scope.outro"))
	return b.String()
}
