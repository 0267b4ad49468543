package eval

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

var (
	// sourceLine is an entry of an answer's list of sources (agents/mrkdwn,
	// docs/tools.md, "Citations"): "[1] handbook/leave.md — Parental leave", or a
	// link "[2] <https://example.com/policy|Leave policy>".
	sourceLine = regexp.MustCompile(`(?m)^\[(\d{1,3})\] (.+)$`)
	// linkURL is a URL in an answer: a Slack link's (<url|text>, <url>) or a bare one.
	linkURL = regexp.MustCompile(`https?://[^\s<>|"'` + "`" + `)\]]+`)
	// entryLink is a linked entry: a Slack link (<url|text>, <url>) or, in
	// Markdown, [text](url).
	entryLink = regexp.MustCompile(`^(?:<(https?://[^|>]+)(?:\|[^>]*)?>|\[.*\]\((https?://[^)\s]+)\))$`)
	// mdEscape is a Markdown backslash escape.
	mdEscape = regexp.MustCompile(`\\(.)`)
	// urlEscapes undoes the escapes of a URL in a Markdown link (agents/mrkdwn).
	urlEscapes = strings.NewReplacer("%28", "(", "%29", ")", "%20", " ")
)

// citation is a source an answer cites: a URL, or a knowledge passage's "document —
// heading" title.
type citation struct{ url, title string }

func (c citation) String() string {
	if c.url != "" {
		return c.url
	}
	return c.title
}

// citationsOf returns the sources an answer cites: the entries of its list of
// sources, and every URL it links.
func citationsOf(answer string) []citation {
	var out []citation
	add := func(c citation) {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	if _, list, ok := cutSources(answer); ok {
		for _, m := range sourceLine.FindAllStringSubmatch(list, -1) {
			entry := strings.TrimSpace(m[2])
			if l := entryLink.FindStringSubmatch(entry); l != nil {
				add(citation{url: urlEscapes.Replace(l[1] + l[2])})
				continue
			}
			add(citation{title: mdEscape.ReplaceAllString(entry, "$1")})
		}
	}
	for _, u := range linkURL.FindAllString(answer, -1) {
		add(citation{url: strings.TrimRight(u, ".,;:!?")})
	}
	return out
}

// sourcesHead is the line that starts an answer's list of sources: "*Sources*" in
// mrkdwn, "**Sources**" in the Markdown of a streamed answer.
var sourcesHead = regexp.MustCompile(`(?m)^\*{1,2}Sources\*{1,2}[ \t]*$`)

// cutSources splits an answer at its (last) list of sources.
func cutSources(answer string) (body, list string, ok bool) {
	all := sourcesHead.FindAllStringIndex(answer, -1)
	if len(all) == 0 {
		return answer, "", false
	}
	at := all[len(all)-1]
	return answer[:at[0]], answer[at[1]:], true
}

// checkCitations checks that every source an answer cites is one that a tool of the
// run returned: its URL, or its "document — heading" title, is in a tool's result.
// Answers are the bot's replies to messages; a workflow's cards are not answers.
func checkCitations(tr *Transcript) Check {
	c := Check{Name: "citations", Pass: true}
	n := 0
	for _, answer := range tr.answers {
		for _, cited := range citationsOf(answer) {
			n++
			if !returnedByTool(cited, tr.Tools) {
				c.Pass = false
				c.Detail = fmt.Sprintf("the answer cites %s, which no tool returned", cited)
				return c
			}
		}
	}
	if n > 0 {
		c.Detail = fmt.Sprintf("%d cited sources, each returned by a tool", n)
	}
	return c
}

// returnedByTool reports whether a tool run that succeeded returned the source c.
func returnedByTool(c citation, runs []ToolRun) bool {
	for _, r := range runs {
		if r.Error != "" {
			continue
		}
		if c.url != "" && strings.Contains(r.Result, c.url) {
			return true
		}
		if c.title != "" && strings.Contains(r.Result, "] "+c.title) {
			return true
		}
	}
	return false
}
