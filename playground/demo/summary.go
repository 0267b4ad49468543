package demo

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
	"github.com/threadwright/threadwright/internal/textcut"
)

// The summarizer (agents.Summarizer): an extractive summary of a thread.

var maxCharsRe = regexp.MustCompile(`At most (\d+) characters`)

// threadSummary folds the summarizer's messages into a short extractive summary: the
// previous summary's lines, then one line per new message.
func threadSummary(msgs []openai.ChatCompletionMessage) string {
	system := messageText(msgs[0])
	ru := strings.Contains(system, "Write the summary in Russian")
	limit := 4000
	if m := maxCharsRe.FindStringSubmatch(system); m != nil {
		limit, _ = strconv.Atoi(m[1])
	}
	user := lastUserText(msgs)
	var lines []string
	if prev := quotedAfter(user, "Previous summary:"); prev != "" {
		for _, l := range strings.Split(prev, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				lines = append(lines, l)
			}
		}
	}
	i := strings.Index(user, "New messages, oldest first:")
	if i >= 0 {
		body := user[i:]
		var header string
		var quote []string
		flush := func() {
			if header != "" && len(quote) > 0 {
				lines = append(lines, summaryLine(header, strings.Join(quote, " "), ru))
			}
			header, quote = "", nil
		}
		for _, l := range strings.Split(body, "\n")[1:] {
			switch {
			case strings.HasPrefix(l, ">"):
				quote = append(quote, strings.TrimSpace(strings.TrimPrefix(l, ">")))
			case strings.HasSuffix(strings.TrimSpace(l), ":"):
				flush()
				header = strings.TrimSpace(l)
			}
		}
		flush()
	}
	if len(lines) == 0 {
		return pick2(ru, "Nothing new to summarize.", "Нового для сводки нет.")
	}
	for len(lines) > 1 && utf8.RuneCountInString(strings.Join(lines, "\n")) > limit {
		lines = lines[1:]
	}
	return textcut.Ellipsis(strings.Join(lines, "\n"), limit, unicode.IsSpace)
}

func summaryLine(header, text string, ru bool) string {
	excerpt := textcut.Ellipsis(firstSentences(oneLine(text), 1), 160, unicode.IsSpace)
	switch {
	case strings.HasPrefix(header, "The assistant"):
		return pick2(ru, "- The assistant replied: ", "- Ассистент ответил: ") + excerpt
	default:
		author, _, _ := strings.Cut(header, " wrote")
		if author == "" || author == "Someone" {
			author = pick2(ru, "Someone", "Кто-то")
		}
		return "- " + author + ": " + excerpt
	}
}
