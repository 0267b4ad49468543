package render

import (
	"strings"

	"github.com/threadwright/threadwright/conversation"
)

// The words of FilesRefused, added to the catalogs of i18n.go.
func init() {
	for lang, words := range map[string]map[string]string{
		"en": {
			"files.intro":       "I could not read every file you attached:",
			"files.too_large":   "too large for me to read",
			"files.unsupported": "a kind of file I cannot read",
			"files.unreadable":  "I could not open it",
			"files.no_vision":   "I cannot see images, so I answered from the text alone",
		},
		"ru": {
			"files.intro":       "Не все приложенные файлы удалось прочитать:",
			"files.too_large":   "слишком большой, чтобы его прочитать",
			"files.unsupported": "такие файлы я читать не умею",
			"files.unreadable":  "не удалось открыть",
			"files.no_vision":   "изображения я не вижу, поэтому ответил только по тексту",
		},
	} {
		for k, v := range words {
			catalogs[lang][k] = v
		}
	}
}

// FilesRefused is the notice, in lang (a catalog language), that names each file of
// a message that was not given to the model and why (conversation.AttachedFile.Refused).
func FilesRefused(lang string, files []conversation.AttachedFile) string {
	var b strings.Builder
	b.WriteString(Tr(lang, "files.intro"))
	for _, f := range files {
		b.WriteString("\n• *" + escapeName(f.Ref.Name) + "*: " + Tr(lang, "files."+f.Refused))
	}
	return b.String()
}

// escapeName keeps a file name from being read as mrkdwn (the characters Slack
// asks to escape, https://docs.slack.dev/messaging/formatting-message-text#escaping).
func escapeName(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "*", "").Replace(s)
}
