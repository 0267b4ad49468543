package render

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/threadwright/threadwright/internal/textcut"
)

// shorten cuts text for people to at most n characters (runes) plus "…": at the last
// word boundary before the limit, so no word is split, and with an emphasis mark
// ("_", "*", "~", "`") left open by the cut closed again, so Slack does not show a
// stray mark. Text that fits is returned unchanged. Model prompts use clip instead,
// whose marker tells the model how much was left out (docs/workflows.md, "Workflows").
func shorten(text string, n int) string {
	head := textcut.Runes(text, n)
	if len(head) == len(text) {
		return text
	}
	if r, _ := utf8.DecodeRuneInString(text[len(head):]); !unicode.IsSpace(r) {
		// The cut falls inside a word: back up to the space before it.
		if i := strings.LastIndexFunc(head, unicode.IsSpace); i > 0 {
			head = head[:i]
		}
	}
	head = strings.TrimRightFunc(head, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsPunct(r) && !strings.ContainsRune("_*~`)", r)
	})
	for _, mark := range []string{"`", "_", "*", "~"} {
		if strings.Count(head, mark)%2 == 1 {
			head = strings.TrimRight(head, mark)
			if strings.Count(head, mark)%2 == 1 {
				return head + "…" + mark
			}
		}
	}
	return head + "…"
}
