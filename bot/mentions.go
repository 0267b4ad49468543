package bot

import (
	"regexp"
	"strings"
)

// specialMention matches what Slack reads as a special mention in message text:
// <!here>, <!channel>, <!everyone>, <!subteam^S123|@team>, and also <!date^…>, up to
// its closing > where there is one ("Formatting text for app surfaces", "Special
// mentions").
var specialMention = regexp.MustCompile(`<!([^<>]*)(>?)`)

// DefuseMentions escapes the special mentions in text (Slack mrkdwn, or the Markdown
// of chat.appendStream's markdown_text) as &lt;!…&gt;, which Slack shows as written
// and never turns into a notification, so text a model or a document wrote cannot
// ping a channel or a user group. A < that ends text is escaped too, since the next
// piece of a stream could start with !. User and channel mentions (<@U…>, <#C…>) and
// links stay as they are. Every text the Messenger sends goes through it: replies,
// streamed chunks, card text and fallbacks, ephemeral messages and file comments
// (docs/operations.md, "Reply bounds").
func DefuseMentions(text string) string {
	if strings.Contains(text, "<!") {
		text = specialMention.ReplaceAllStringFunc(text, func(m string) string {
			if strings.HasSuffix(m, ">") {
				return "&lt;" + m[1:len(m)-1] + "&gt;"
			}
			return "&lt;" + m[1:]
		})
	}
	if strings.HasSuffix(text, "<") {
		text = text[:len(text)-1] + "&lt;"
	}
	return text
}
