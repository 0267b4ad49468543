package mrkdwn

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/threadwright/threadwright/conversation"
)

// Source is one source of an answer (docs/tools.md, "Citations"): a knowledge passage's
// document and heading, or a web page's title and URL.
type Source struct {
	// Title names the source: a knowledge document's path and heading
	// ("handbook/leave.md — Parental leave"), or a web page's title.
	Title string
	// URL links the source; "" for a knowledge document without one.
	URL string
}

// key identifies a source, so that one cited twice is listed once.
func (s Source) key() string {
	if s.URL != "" {
		return s.URL
	}
	return s.Title
}

// turnSources are the sources a turn's tool results gave the model, by the labels the
// model saw: search_knowledge numbers its passages "[n] source — heading" in each
// result, web_search its results "n. title" with the URL under it; fetch_url pages
// carry no number.
type turnSources struct {
	// knowledge and search hold one map per call, in call order: label → source.
	knowledge, search []map[int]Source
	// pages are the pages fetch_url read, in call order.
	pages []Source
	// retrieved are the passages and results of knowledge and web searches, in the
	// order the tools returned them.
	retrieved []Source
}

var (
	// knowledgeRefLine is a passage's numbered line in a search_knowledge result,
	// after a blank line.
	knowledgeRefLine = regexp.MustCompile(`\n\n\[(\d+)\] ([^\n]+)`)
	// searchResultLine is a result's title line in a web_search result, with its URL
	// on the next line.
	searchResultLine = regexp.MustCompile(`(?m)^(\d+)\. (.+)\n   (https?://\S+)$`)
	// citationMarker is a marker the model writes, [n], with the blanks before it
	// (replaceMarkers leaves out a link's text, [n](url), and a reference
	// definition, [n]: url).
	citationMarker = regexp.MustCompile(`[ \t]*\[(\d{1,3})\]`)
)

// collectSources reads the sources from calls, the results the turn actually got
// (never from the model's text): only calls that ran and did not fail count.
func collectSources(calls []conversation.ToolCall) turnSources {
	var ts turnSources
	for _, c := range calls {
		if c.Failed || c.Denied {
			continue
		}
		switch c.Name {
		case "search_knowledge":
			m := map[int]Source{}
			for _, g := range knowledgeRefLine.FindAllStringSubmatch(c.Result, -1) {
				n, _ := strconv.Atoi(g[1])
				if n != len(m)+1 {
					continue // not the next passage: a line of a passage's text
				}
				title := strings.TrimSpace(g[2])
				src := Source{Title: title}
				if doc, _, _ := strings.Cut(title, " — "); isWebURL(doc) {
					src.URL = doc
				}
				m[n] = src
				ts.retrieved = append(ts.retrieved, src)
			}
			if len(m) > 0 {
				ts.knowledge = append(ts.knowledge, m)
			}
		case "web_search":
			m := map[int]Source{}
			for _, g := range searchResultLine.FindAllStringSubmatch(c.Result, -1) {
				n, _ := strconv.Atoi(g[1])
				m[n] = Source{Title: strings.TrimSpace(g[2]), URL: g[3]}
				ts.retrieved = append(ts.retrieved, m[n])
			}
			if len(m) > 0 {
				ts.search = append(ts.search, m)
			}
		case "fetch_url":
			var page Source
			for _, line := range strings.Split(c.Result, "\n") {
				if line == "" {
					break // the header ends at the first blank line
				}
				// The first of each: the page cannot add its own.
				if v, ok := strings.CutPrefix(line, "URL: "); ok && page.URL == "" {
					page.URL = strings.TrimSpace(v)
				} else if v, ok := strings.CutPrefix(line, "Title: "); ok && page.Title == "" {
					page.Title = strings.TrimSpace(v)
				}
			}
			if isWebURL(page.URL) {
				ts.pages = append(ts.pages, page)
			}
		}
	}
	return ts
}

// resolve returns the source the model's marker [n] names: passage n of the latest
// knowledge search that had one, or else result n of the latest web search.
func (ts turnSources) resolve(n int) (Source, bool) {
	for _, group := range [][]map[int]Source{ts.knowledge, ts.search} {
		for i := len(group) - 1; i >= 0; i-- {
			if s, ok := group[i][n]; ok {
				return s, true
			}
		}
	}
	return Source{}, false
}

// MaxRetrieved bounds the sources an Attribution lists as retrieved, not cited.
const MaxRetrieved = 5

// Attribution is an answer with its sources (Attribute; docs/tools.md, "Citations").
type Attribution struct {
	// Text is the answer with its markers renumbered, as Cite returns it.
	Text string
	// Cited are the sources the answer cites, then the pages fetch_url read, as Cite
	// returns them.
	Cited []Source
	// Retrieved, when the answer cites none of the passages and results its searches
	// returned (the model wrote no markers), are those, distinct, in the order the
	// tools returned them, at most MaxRetrieved, leaving out those in Cited: which of
	// them the answer used is unknown, so they are listed as retrieved, not cited.
	// It is nil when the answer cites any of them.
	Retrieved []Source
}

// Cite matches the [n] markers of answer (Markdown) to the sources of calls, the
// turn's tool results, and returns the answer with its markers renumbered in the
// order they first appear, the markers that name no source removed, and the sources
// in that order: the cited passages and results, then the pages fetch_url read that
// no marker cites. A marker [n] names passage n of the latest search_knowledge result
// that has one, or else result n of the latest web_search result. Markers in code
// spans and code blocks, link texts ([n](url)) and reference definitions are left as
// they are. With no sources, answer comes back as it is.
func Cite(answer string, calls []conversation.ToolCall) (string, []Source) {
	a := Attribute(answer, calls)
	return a.Text, a.Cited
}

// Attribute is Cite, and when the answer cites none of what the turn's searches
// returned, those as Attribution.Retrieved.
func Attribute(answer string, calls []conversation.ToolCall) Attribution {
	ts := collectSources(calls)
	var a Attribution
	number := map[string]int{} // source key → its number in the list
	add := func(s Source) int {
		if n, ok := number[s.key()]; ok {
			return n
		}
		a.Cited = append(a.Cited, s)
		number[s.key()] = len(a.Cited)
		return len(a.Cited)
	}
	a.Text = mapProse(answer, func(prose string) string {
		return replaceMarkers(prose, func(n int) (int, bool) {
			s, ok := ts.resolve(n)
			if !ok {
				return 0, false
			}
			return add(s), true
		})
	})
	citedAny := len(a.Cited) > 0
	for _, p := range ts.pages {
		add(p)
	}
	if citedAny {
		return a
	}
	for _, s := range ts.retrieved {
		if _, ok := number[s.key()]; ok || len(a.Retrieved) == MaxRetrieved {
			continue
		}
		number[s.key()] = 0
		a.Retrieved = append(a.Retrieved, s)
	}
	return a
}

// replaceMarkers rewrites the markers of prose: each [n] becomes [m] when number(n)
// gives m, and goes, with the blanks before it (after it at a line's start), when it
// gives false.
func replaceMarkers(prose string, number func(n int) (int, bool)) string {
	locs := citationMarker.FindAllStringSubmatchIndex(prose, -1)
	if locs == nil {
		return prose
	}
	var b strings.Builder
	last := 0
	for _, l := range locs {
		start, end := l[0], l[1]
		if end < len(prose) && (prose[end] == '(' || prose[end] == ':') {
			continue // a link's text or a reference definition
		}
		n, _ := strconv.Atoi(prose[l[2]:l[3]])
		b.WriteString(prose[last:start])
		last = end
		if m, ok := number(n); ok {
			b.WriteString(prose[start:l[2]-1] + "[" + strconv.Itoa(m) + "]")
		} else if start == 0 || prose[start-1] == '\n' {
			for last < len(prose) && (prose[last] == ' ' || prose[last] == '\t') {
				last++ // a line that began with the marker begins with its text
			}
		}
	}
	b.WriteString(prose[last:])
	return b.String()
}

// mapProse applies f to the parts of Markdown md outside fenced code blocks and
// code spans, found as FromMarkdown finds them, and returns md with them replaced.
func mapProse(md string, f func(string) string) string {
	lines := strings.Split(md, "\n")
	fence := ""
	for i, line := range lines {
		switch {
		case fence != "":
			if isFenceClose(line, fence) {
				fence = ""
			}
		case fenceOpen.MatchString(line):
			fence = fenceOpen.FindStringSubmatch(line)[2]
		default:
			lines[i] = mapOutsideCodeSpans(line, f)
		}
	}
	return strings.Join(lines, "\n")
}

// mapOutsideCodeSpans applies f to the parts of line outside `code spans` (a run of
// backticks to the next run of the same length; an unmatched run is text).
func mapOutsideCodeSpans(line string, f func(string) string) string {
	var b strings.Builder
	text := 0 // where the text not yet given to f begins
	for at := 0; ; {
		i := strings.IndexByte(line[at:], '`')
		if i < 0 {
			break
		}
		i += at
		n := runLen(line[i:], '`')
		end := closingRun(line[i+n:], n)
		if end < 0 {
			at = i + n
			continue
		}
		b.WriteString(f(line[text:i]))
		text = i + n + end + n
		b.WriteString(line[i:text])
		at = text
	}
	b.WriteString(f(line[text:]))
	return b.String()
}

// Sources renders sources as the mrkdwn block that ends a cited answer: heading in
// bold ("*Sources*"), then one numbered line each, "[1] <url|title>" for a source
// with a URL, "[1] handbook/leave.md — Parental leave" for one without; texts
// escaped. It returns "" for no sources.
func Sources(heading string, sources []Source) string {
	return sourceList(sources, "*"+Escape(heading)+"*", "\n", numbered, mrkdwnEntry)
}

// RetrievedSources renders sources as Sources does, each line marked "• " instead of
// numbered: sources no marker cites (Attribution.Retrieved), under a heading that
// says so.
func RetrievedSources(heading string, sources []Source) string {
	return sourceList(sources, "*"+Escape(heading)+"*", "\n", bulleted, mrkdwnEntry)
}

// SourcesMarkdown renders sources as Sources does, in Markdown (a streamed
// answer's markdown_text): "**Sources**", then "[1] [title](url)" or "[1] title" on
// lines of their own, texts escaped. It returns "" for no sources.
func SourcesMarkdown(heading string, sources []Source) string {
	return sourceList(sources, "**"+markdownEscaper.Replace(heading)+"**", "  \n", numbered, markdownEntry)
}

// RetrievedSourcesMarkdown renders sources as RetrievedSources does, in Markdown.
func RetrievedSourcesMarkdown(heading string, sources []Source) string {
	return sourceList(sources, "**"+markdownEscaper.Replace(heading)+"**", "  \n", bulleted, markdownEntry)
}

// mrkdwnEntry is a source's entry in mrkdwn: a Slack link, or its title escaped.
func mrkdwnEntry(s Source, title string) string {
	if !isWebURL(s.URL) {
		return Escape(title)
	}
	label := ""
	if title != "" && title != s.URL {
		label = strings.NewReplacer("|", "¦").Replace(Escape(title))
	}
	return slackLinkTo(s.URL, label)
}

// markdownEntry is a source's entry in Markdown: a link, or its title escaped.
func markdownEntry(s Source, title string) string {
	title = markdownEscaper.Replace(title)
	switch {
	case isWebURL(s.URL) && title != "":
		return "[" + title + "](" + strings.NewReplacer("(", "%28", ")", "%29", " ", "%20").Replace(s.URL) + ")"
	case isWebURL(s.URL):
		return "<" + s.URL + ">"
	}
	return title
}

// numbered marks the i-th (from 0) entry of a list of cited sources, "[i+1] ";
// bulleted one of sources not cited, "• ".
func numbered(i int) string { return "[" + strconv.Itoa(i+1) + "] " }
func bulleted(int) string   { return "• " }

// sourceList is heading, then for each source a line break (br), its mark and
// entry(source, its title with spaces collapsed); "" for no sources.
func sourceList(sources []Source, heading, br string, mark func(i int) string, entry func(s Source, title string) string) string {
	if len(sources) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(heading)
	for i, s := range sources {
		b.WriteString(br + mark(i))
		b.WriteString(entry(s, strings.Join(strings.Fields(s.Title), " ")))
	}
	return b.String()
}

// markdownEscaper escapes the characters that would make a source's title Markdown.
var markdownEscaper = strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`, "*", `\*`, "_", `\_`, "`", "\\`", "<", `\<`, ">", `\>`)

// isWebURL reports whether s is an absolute http(s) URL.
func isWebURL(s string) bool {
	return strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://")
}
