package doclinks

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// text is a run of prose to search for pointers: a comment group, a string literal
// or a Markdown paragraph, its lines joined by "\n". line is the number of its first
// line in its file.
type text struct {
	s    string
	line int
	// paths says whether repository paths are checked in it (comments and Markdown,
	// not string literals, which are often test data).
	paths bool
	// goFile says that it is a Go comment, where bare file names (check.go) count.
	goFile bool
}

// lineAt is the file's line number of byte offset off of t.
func (t text) lineAt(off int) int { return t.line + strings.Count(t.s[:off], "\n") }

// document is what a Markdown file offers to pointers: its headings' texts and the
// anchors GitHub makes for them.
type document struct {
	headings []string        // the headings' texts, markup removed
	anchors  map[string]bool // Anchor of each heading, with GitHub's -1, -2… for repeats
}

// has reports whether section names one of d's headings, ignoring case and runs of
// white space.
func (d document) has(section string) bool {
	want := normalize(section)
	for _, h := range d.headings {
		if strings.EqualFold(normalize(h), want) {
			return true
		}
	}
	return false
}

var (
	atxHeading = regexp.MustCompile(`^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	inlineLink = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
)

// parseMarkdown splits a Markdown file into its prose paragraphs (outside fenced code
// blocks; headings are not prose) and its headings.
func parseMarkdown(src string) ([]text, document) {
	var (
		texts []text
		doc   = document{anchors: map[string]bool{}}
		seen  = map[string]int{}
		para  []string
		start int
		fence string
	)
	flush := func() {
		if len(para) > 0 {
			texts = append(texts, text{s: strings.Join(para, "\n"), line: start, paths: true})
		}
		para = nil
	}
	for i, line := range strings.Split(src, "\n") {
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]) == "" {
				fence = ""
			}
			continue
		}
		if f := fenceOpening(trimmed); f != "" {
			flush()
			fence = f
			continue
		}
		if m := atxHeading.FindStringSubmatch(line); m != nil {
			flush()
			h := headingText(m[1])
			doc.headings = append(doc.headings, h)
			a := Anchor(h)
			if n := seen[a]; n > 0 {
				doc.anchors[a+"-"+strconv.Itoa(n)] = true
			} else {
				doc.anchors[a] = true
			}
			seen[a]++
			continue
		}
		if trimmed == "" {
			flush()
			continue
		}
		if len(para) == 0 {
			start = i + 1
		}
		para = append(para, line)
	}
	flush()
	return texts, doc
}

// fenceOpening is the fence that line (trimmed) opens, "```" or "~~~" or longer, or "".
func fenceOpening(trimmed string) string {
	for _, c := range []string{"`", "~"} {
		n := len(trimmed) - len(strings.TrimLeft(trimmed, c))
		if n >= 3 {
			return strings.Repeat(c, n)
		}
	}
	return ""
}

// headingText is the text a heading shows: links reduced to their text, code and
// emphasis marks removed.
func headingText(s string) string {
	s = inlineLink.ReplaceAllString(s, "$1")
	s = strings.NewReplacer("`", "", "**", "", "*", "").Replace(s)
	return strings.TrimSpace(s)
}

// Anchor is the fragment GitHub gives a heading whose text is h: lower case, letters,
// digits, '_' and '-' kept, spaces turned into '-', everything else dropped.
// ("Usage, cost and budgets" → "usage-cost-and-budgets".) A repeated heading's
// anchor gets -1, -2… after the first; parseMarkdown adds those.
func Anchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// normalize collapses runs of white space (a line break in a wrapped comment
// included) into one space.
func normalize(s string) string { return strings.Join(strings.Fields(s), " ") }
