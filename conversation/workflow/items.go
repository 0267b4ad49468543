package workflow

import (
	"regexp"
	"strings"
)

// Item is one item of an artifact's text, as Items splits it: a section of an
// outline or an entry of a numbered list.
type Item struct {
	// Title is the heading's or the list entry's text.
	Title string
	// Body is the text under it, trimmed; "" when there is none.
	Body string
}

// Items splits markdown, the text of the artifact a foreach names, into the items the
// foreach artifact is written once for, in order of appearance. The first rule that
// gives at least one item wins:
//
//  1. Headings. An ATX heading is a line of 1 to 6 "#" after at most three spaces,
//     followed by a space, a tab or the end of the line; its title is the rest of
//     the line without a closing run of "#". Lines inside fenced code blocks (``` or
//     ~~~) are never headings. Of the levels that at least two headings have, the
//     shallowest is used: each heading of that level starts an item, whose body is
//     the text up to the next heading of that level or a shallower one. A "# Title"
//     followed by "## Intro", "## Method" gives two items, Intro and Method, with
//     any "###" under them in their bodies.
//  2. Else a numbered list. Each line that starts, unindented and outside fenced
//     code, with up to nine digits, "." or ")", then a space or a tab ("1. Intro",
//     "2) Method") starts an item. When its text begins with a bold part
//     ("**Intro** — why it matters"), the bold part is the title and the rest, less
//     leading punctuation, begins the body. The body goes on with the lines up to
//     the next item that are indented, or unindented but directly after a non-blank
//     line of the item (lazy continuation); a heading, or an unindented line after
//     a blank line, ends it (the list is over). The body's common indentation is
//     removed.
//  3. Else there are no items: Items returns nil.
//
// Text before the first item, and text that ends an item (a shallower heading, the
// end of the list) up to the next item, belongs to no item. Titles are trimmed, lose
// surrounding "**" and trailing colons; a heading or list line whose title is then
// empty is not counted. Bodies are trimmed. Items does not bound the number of
// items (see MaxItems).
func Items(markdown string) []Item {
	lines := scanLines(markdown)
	var count [7]int // headings per level
	for _, l := range lines {
		count[l.level]++
	}
	for level := 1; level <= 6; level++ {
		if count[level] >= 2 {
			return headingItems(markdown, lines, level, count[level])
		}
	}
	return listItems(markdown, lines)
}

// mdLine is one line of a Markdown text, classified by scanLines.
type mdLine struct {
	start, end int    // byte offsets of the line in the text, without "\r\n"
	next       int    // offset of the next line
	fenced     bool   // a fence or inside a fenced code block
	level      int    // heading level 1..6 with a title, else 0
	title      string // the heading's title
}

// scanLines splits markdown into lines, marking fenced code and headings.
func scanLines(markdown string) []mdLine {
	lines := make([]mdLine, 0, strings.Count(markdown, "\n")+1)
	var (
		fence    byte // '`' or '~' inside a fenced block, else 0
		fenceLen int
	)
	for start := 0; start < len(markdown); {
		end, next := len(markdown), len(markdown)
		if i := strings.IndexByte(markdown[start:], '\n'); i >= 0 {
			end, next = start+i, start+i+1
		}
		if end > start && markdown[end-1] == '\r' {
			end--
		}
		l := mdLine{start: start, end: end, next: next}
		text := markdown[start:end]
		if c, n, info := fenceOf(text); n > 0 {
			switch {
			case fence == 0:
				fence, fenceLen = c, n
				l.fenced = true
			case c == fence && n >= fenceLen && info == "":
				fence = 0
				l.fenced = true
			}
		}
		if fence != 0 {
			l.fenced = true
		}
		if !l.fenced {
			l.level, l.title = heading(text)
		}
		lines = append(lines, l)
		start = next
	}
	return lines
}

// fenceOf returns the fence character and length when line opens or closes a fenced
// code block (at most three spaces, then at least three ` or ~), and the text after
// the fence, trimmed.
func fenceOf(line string) (c byte, n int, info string) {
	rest, ok := indent3(line)
	if !ok || len(rest) < 3 || (rest[0] != '`' && rest[0] != '~') {
		return 0, 0, ""
	}
	c = rest[0]
	for n < len(rest) && rest[n] == c {
		n++
	}
	if n < 3 {
		return 0, 0, ""
	}
	return c, n, strings.TrimSpace(rest[n:])
}

// heading returns the level and title of an ATX heading line with a title, else 0.
func heading(line string) (int, string) {
	rest, ok := indent3(line)
	if !ok {
		return 0, ""
	}
	level := 0
	for level < len(rest) && rest[level] == '#' {
		level++
	}
	if level == 0 || level > 6 || (level < len(rest) && rest[level] != ' ' && rest[level] != '\t') {
		return 0, ""
	}
	text := strings.TrimRight(rest[level:], " \t")
	if closed := strings.TrimRight(text, "#"); closed == "" || strings.HasSuffix(closed, " ") || strings.HasSuffix(closed, "\t") {
		text = closed
	}
	title := cleanTitle(text)
	if title == "" {
		return 0, ""
	}
	return level, title
}

// indent3 strips up to three leading spaces; ok is false when there are more.
func indent3(line string) (string, bool) {
	for i := 0; i < 3 && strings.HasPrefix(line, " "); i++ {
		line = line[1:]
	}
	return line, !strings.HasPrefix(line, " ") && !strings.HasPrefix(line, "\t")
}

// cleanTitle trims s and strips surrounding "**" and trailing colons.
func cleanTitle(s string) string {
	s = strings.TrimSpace(s)
	if inner, ok := strings.CutPrefix(s, "**"); ok && len(inner) > 2 && strings.HasSuffix(inner, "**") && !strings.Contains(inner[:len(inner)-2], "**") {
		s = strings.TrimSpace(inner[:len(inner)-2])
	}
	return strings.TrimSpace(strings.TrimRight(s, ":"))
}

// headingItems returns the n items started by the headings of level.
func headingItems(markdown string, lines []mdLine, level, n int) []Item {
	items := make([]Item, 0, n)
	for i := 0; i < len(lines); i++ {
		if lines[i].level != level {
			continue
		}
		j := i + 1
		for j < len(lines) && (lines[j].level == 0 || lines[j].level > level) {
			j++
		}
		end := len(markdown)
		if j < len(lines) {
			end = lines[j].start
		}
		items = append(items, Item{Title: lines[i].title, Body: strings.TrimSpace(markdown[lines[i].next:end])})
		i = j - 1
	}
	return items
}

// listItems returns the items of the numbered list of markdown, or nil.
func listItems(markdown string, lines []mdLine) []Item {
	var items []Item
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if l.fenced {
			continue
		}
		text, ok := listEntry(markdown[l.start:l.end])
		if !ok {
			continue
		}
		title, rest := text, ""
		if inner, ok := strings.CutPrefix(text, "**"); ok {
			if k := strings.Index(inner, "**"); k > 0 {
				title, rest = inner[:k], strings.TrimLeft(inner[k+2:], " \t:.—–-")
			}
		}
		title = cleanTitle(title)
		if title == "" {
			continue
		}
		// The body: the lines up to the end of the item.
		j, blank := i+1, false
		for ; j < len(lines); j++ {
			m := lines[j]
			line := markdown[m.start:m.end]
			if strings.TrimSpace(line) == "" {
				blank = true
				continue
			}
			indented := line[0] == ' ' || line[0] == '\t'
			if m.level > 0 || !indented && blank {
				break
			}
			if _, ok := listEntry(line); ok && !m.fenced {
				break
			}
			blank = false
		}
		items = append(items, Item{Title: title, Body: listBody(rest, markdown, lines[i+1:j])})
		i = j - 1
	}
	return items
}

// listEntry returns the text of an unindented numbered list line ("1. x", "2) x").
func listEntry(line string) (string, bool) {
	n := 0
	for n < len(line) && n < 10 && line[n] >= '0' && line[n] <= '9' {
		n++
	}
	if n == 0 || n > 9 || n+1 >= len(line) || (line[n] != '.' && line[n] != ')') || (line[n+1] != ' ' && line[n+1] != '\t') {
		return "", false
	}
	return strings.TrimSpace(line[n+2:]), true
}

// listBody joins rest (the item line's text after its bold title) and lines, less
// their common indentation, and trims the result.
func listBody(rest, markdown string, lines []mdLine) string {
	for len(lines) > 0 && strings.TrimSpace(markdown[lines[len(lines)-1].start:lines[len(lines)-1].end]) == "" {
		lines = lines[:len(lines)-1]
	}
	if len(lines) == 0 {
		return rest
	}
	common := -1
	for _, l := range lines {
		line := markdown[l.start:l.end]
		if strings.TrimSpace(line) == "" {
			continue
		}
		n := len(line) - len(strings.TrimLeft(line, " \t"))
		if common < 0 || n < common {
			common = n
		}
	}
	block := markdown[lines[0].start:lines[len(lines)-1].end]
	if common <= 0 {
		if rest == "" {
			return strings.TrimSpace(block)
		}
		return rest + "\n" + strings.TrimSpace(block)
	}
	var b strings.Builder
	b.Grow(len(rest) + 1 + len(block))
	b.WriteString(rest)
	for k, l := range lines {
		if k > 0 || rest != "" {
			b.WriteByte('\n')
		}
		if line := markdown[l.start:l.end]; strings.TrimSpace(line) != "" {
			b.WriteString(line[common:])
		}
	}
	return strings.TrimSpace(b.String())
}

// The batch write of a research_strategy: batch artifact (docs/workflows.md, "Pipelines"):
// one write covers every pending item, in one text with a "## " section per item;
// SplitBatch matches the sections of text, a batch write (split by its headings as
// Items splits), to titles by title (trimmed, case-insensitive, with or without the
// prompt's "Item 2 of 5: " or a "2. " before it: batchKey): the result maps a
// title's index to its section's text. Titles that repeat take the sections of that
// title in order (the second "Examples" item the second "Examples" section). A title
// without a section, or whose section is empty, is missing from the result; sections
// beyond those asked for are ignored.
func SplitBatch(text string, titles []string) map[int]string {
	byTitle := map[string][]string{}
	found := Items(text)
	if len(titles) == 1 {
		// One item: Items needs two headings of a level to split by headings.
		if it, ok := headingSection(text, titles[0]); ok {
			found = []Item{it}
		}
	}
	for _, it := range found {
		k := batchKey(it.Title)
		byTitle[k] = append(byTitle[k], it.Body)
	}
	out := map[int]string{}
	for i, title := range titles {
		k := batchKey(title)
		bodies := byTitle[k]
		if len(bodies) == 0 {
			continue
		}
		byTitle[k] = bodies[1:]
		if strings.TrimSpace(bodies[0]) != "" {
			out[i] = bodies[0]
		}
	}
	return out
}

// listedRE matches how the batch prompt lists an item before its title ("Item 2 of
// 5: "), or a number before it ("2. ", "2) "), which a section's title may copy.
var listedRE = regexp.MustCompile(`(?i)^(?:item\s+\d+\s+of\s+\d+\s*:|\d{1,3}[.)])\s*`)

// batchKey is the key by which SplitBatch matches a section's title to an item's:
// trimmed, lower case, without a listed item's prefix.
func batchKey(title string) string {
	return strings.ToLower(strings.TrimSpace(listedRE.ReplaceAllString(strings.TrimSpace(title), "")))
}

// headingSection returns the section of text under its first heading (any level,
// outside fenced code) titled title (trimmed, case-insensitive, as Items cleans
// titles): its body runs to the next heading of that level or a shallower one.
func headingSection(text, title string) (Item, bool) {
	lines := scanLines(text)
	for i, l := range lines {
		if l.level == 0 || batchKey(l.title) != batchKey(title) {
			continue
		}
		j := i + 1
		for j < len(lines) && (lines[j].level == 0 || lines[j].level > l.level) {
			j++
		}
		end := len(text)
		if j < len(lines) {
			end = lines[j].start
		}
		return Item{Title: l.title, Body: strings.TrimSpace(text[l.next:end])}, true
	}
	return Item{}, false
}

// MaxItemQueries bounds the search queries SearchQueries returns for one item.
const MaxItemQueries = 5

var (
	// queriesLabelRE matches the line that starts an item's search queries:
	// "Search queries:" or "Поисковые запросы:", optionally emphasised ("**Search
	// queries:**") or as a heading ("### Search queries"), case-insensitive.
	queriesLabelRE = regexp.MustCompile(`(?i)^\s*(?:#{1,6}\s+)?[*_]*\s*(?:search queries|поисковые запросы)\s*[*_]*\s*:?\s*[*_]*\s*$`)
	// queryEntryRE matches one entry of the list under it: "- q", "* q", "+ q", "1. q".
	queryEntryRE = regexp.MustCompile(`^\s*(?:[-*+]|\d{1,3}[.)])\s+(.+?)\s*$`)
)

// SearchQueries returns the search queries an item's body lists, in order, for the
// research written from it (docs/workflows.md, "Pipelines"): the entries of the
// list right under a line "Search queries:" (or "**Search queries:**", "### Search
// queries", "Поисковые запросы:"), each less surrounding quotes and backticks, without empty entries or
// repeats (case-insensitive), at most MaxItemQueries. Blank lines between the label
// and the list are skipped; the first line that is not a list entry ends it. A body
// without such a line has none (nil).
//
//	## Why stand-ups drift
//	What the section covers.
//	Key points:
//	- meetings grow with the team
//	Search queries:
//	- "stand-up meeting length" team size study
//	- async stand-up tools comparison
func SearchQueries(body string) []string {
	lines := strings.Split(body, "\n")
	for i, l := range lines {
		if !queriesLabelRE.MatchString(l) {
			continue
		}
		var out []string
		seen := map[string]bool{}
		started := false
		for _, l := range lines[i+1:] {
			if strings.TrimSpace(l) == "" && !started {
				continue
			}
			m := queryEntryRE.FindStringSubmatch(l)
			if m == nil {
				break
			}
			started = true
			q := strings.Join(strings.Fields(unquote(m[1])), " ")
			if q == "" || seen[strings.ToLower(q)] {
				continue
			}
			seen[strings.ToLower(q)] = true
			if out = append(out, q); len(out) == MaxItemQueries {
				break
			}
		}
		return out
	}
	return nil
}

// unquote removes one pair of quotes or backticks around the whole of s.
func unquote(s string) string {
	for _, p := range [][2]string{{"`", "`"}, {`"`, `"`}, {"“", "”"}, {"'", "'"}} {
		if len(s) >= len(p[0])+len(p[1]) && strings.HasPrefix(s, p[0]) && strings.HasSuffix(s, p[1]) {
			return s[len(p[0]) : len(s)-len(p[1])]
		}
	}
	return s
}
