package mrkdwn

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

var (
	// urlEscaper keeps a URL from breaking the <url|label> syntax.
	urlEscaper = strings.NewReplacer("&", "&amp;", "<", "%3C", ">", "%3E", "|", "%7C")
	boldMarks  = strings.NewReplacer("**", "", "__", "")
)

// FromMarkdown converts Markdown, as models write it, to Slack mrkdwn:
//
//   - **bold** and __bold__ become *bold*; *italic* and _italic_ become _italic_;
//     ***both*** becomes *_both_*; ~~strike~~ becomes ~strike~;
//   - [text](url) and ![alt](url) become <url|text>; <url> autolinks stay links; bare
//     URLs are left for Slack to link;
//   - # headings (any level) become a *bold* line; "- item", "* item" and "+ item"
//     bullets become "• item" ("◦" when nested); task items become ☐ / ☑;
//     a horizontal rule becomes a line of ─; > quotes stay quotes;
//   - tables become an aligned code block, within the table bounds (MaxTableColumns,
//     MaxCellChars, MaxTableWidth);
//   - code spans and fenced code blocks keep their text as is (the fence's language
//     is dropped: Slack does not use it).
//
// Everywhere, code included, &, < and > are escaped (Escape): Slack decodes them
// inside code too, and unescaped they could form control sequences. Only the links the
// conversion emits and user and channel mentions the model copied (<@U…>, <#C…>) stay
// raw; <!here>, <!channel> and <!everyone> are escaped, so a model cannot ping a whole
// channel.
func FromMarkdown(md string) string {
	md = strings.ReplaceAll(md, "\r\n", "\n")
	lines := strings.Split(md, "\n")
	out := make([]string, 0, len(lines))
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if m := fenceOpen.FindStringSubmatch(line); m != nil {
			indent, fence := m[1], m[2]
			out = append(out, "```")
			i++
			for ; i < len(lines); i++ {
				if isFenceClose(lines[i], fence) {
					break
				}
				out = append(out, Escape(strings.TrimPrefix(lines[i], indent)))
			}
			out = append(out, "```")
			continue
		}
		if isTableRow(line) && i+1 < len(lines) && tableSeparator.MatchString(lines[i+1]) {
			var rows []string
			for ; i < len(lines) && isTableRow(lines[i]); i++ {
				rows = append(rows, lines[i])
			}
			i--
			out = append(out, renderTable(rows)...)
			continue
		}
		out = append(out, convertLine(line))
	}
	return strings.Join(out, "\n")
}

var (
	fenceOpen   = regexp.MustCompile("^(\\s*)(`{3,}|~{3,})[^`]*$")
	heading     = regexp.MustCompile(`^\s{0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$`)
	rule        = regexp.MustCompile(`^\s{0,3}(?:(?:-\s*){3,}|(?:\*\s*){3,}|(?:_\s*){3,})$`)
	quote       = regexp.MustCompile(`^\s{0,3}(?:>\s?)+(.*)$`)
	taskItem    = regexp.MustCompile(`^(\s*)[-*+]\s+\[([ xX])\]\s+(.*)$`)
	bulletItem  = regexp.MustCompile(`^(\s*)[-*+]\s+(.*)$`)
	orderedItem = regexp.MustCompile(`^(\s*)(\d{1,9}[.)])\s+(.*)$`)
)

// isFenceClose reports whether line closes a code block opened with fence: the same
// character, at least as many, nothing else.
func isFenceClose(line, fence string) bool {
	t := strings.TrimSpace(line)
	return len(t) >= len(fence) && strings.Trim(t, fence[:1]) == ""
}

func convertLine(line string) string {
	if strings.TrimSpace(line) == "" {
		return ""
	}
	if m := heading.FindStringSubmatch(line); m != nil {
		text := boldMarks.Replace(m[1])
		if strings.TrimSpace(text) == "" {
			return ""
		}
		return "*" + inline(text) + "*"
	}
	if rule.MatchString(line) {
		return "──────────"
	}
	if m := quote.FindStringSubmatch(line); m != nil {
		return ">" + " " + convertLine(m[1])
	}
	if m := taskItem.FindStringSubmatch(line); m != nil {
		box := "☐"
		if m[2] != " " {
			box = "☑"
		}
		return listIndent(m[1]) + box + " " + inline(m[3])
	}
	if m := bulletItem.FindStringSubmatch(line); m != nil {
		indent := listIndent(m[1])
		bullet := "•"
		if indent != "" {
			bullet = "◦"
		}
		return indent + bullet + " " + inline(m[2])
	}
	if m := orderedItem.FindStringSubmatch(line); m != nil {
		return listIndent(m[1]) + m[2] + " " + inline(m[3])
	}
	return inline(line)
}

// listIndent turns a list item's leading white space into its nesting: four spaces a
// level, a level being two columns of Markdown indentation (a tab counts four).
func listIndent(ws string) string {
	cols := 0
	for _, r := range ws {
		if r == '\t' {
			cols += 4
		} else {
			cols++
		}
	}
	return strings.Repeat("    ", cols/2)
}

// Inline conversion works on one line in three passes: the parts that must not be
// touched (code spans, links, URLs, mentions) are swapped for placeholders made of
// private-use characters; the rest is escaped and its emphasis converted; the
// placeholders are swapped back.
const (
	phOpen  = '\uE000'
	phClose = '\uE001'
	boldTag = "\uE002" // stands for the * of Slack bold until the italics are done
)

var (
	placeholder = regexp.MustCompile("\uE000([0-9]+)\uE001")
	link        = regexp.MustCompile(`(!?)\[([^\[\]]*)\]\(\s*<?([^\s()<>]+(?:\([^\s()<>]*\)[^\s()<>]*)*)>?(?:\s+"[^"]*")?\s*\)`)
	slackLink   = regexp.MustCompile(`<((?:https?|mailto):[^\s<>|]+)(?:\|([^<>]*))?>`)
	bareURL     = regexp.MustCompile(`https?://[^\s<>\x60\x{E000}-\x{E002}]*[^\s<>\x60\x{E000}-\x{E002}.,;:!?'")\]*_~]`)
	mention     = regexp.MustCompile(`<(?:@[UW][A-Z0-9]+|#C[A-Z0-9]+(?:\|[^<>|]*)?)>`)

	boldItalic = regexp.MustCompile(`\*\*\*([^\s*](?:.*?[^\s*])?)\*\*\*`)
	boldStar   = regexp.MustCompile(`\*\*([^\s*](?:.*?[^\s])?)\*\*`)
	boldUnder  = regexp.MustCompile(`__([^\s_](?:.*?[^\s_])?)__`)
	italicStar = regexp.MustCompile(`\*([^\s*](?:[^*]*?[^\s*])?)\*`)
	strike     = regexp.MustCompile(`~~([^\s~](?:.*?[^\s~])?)~~`)
)

type inliner struct{ held []string }

// hold stores s and returns the placeholder that stands for it.
func (in *inliner) hold(s string) string {
	in.held = append(in.held, s)
	return string(phOpen) + strconv.Itoa(len(in.held)-1) + string(phClose)
}

func (in *inliner) restore(s string) string {
	return placeholder.ReplaceAllStringFunc(s, func(m string) string {
		i, err := strconv.Atoi(m[len(string(phOpen)) : len(m)-len(string(phClose))])
		if err != nil || i >= len(in.held) {
			return ""
		}
		return in.restore(in.held[i])
	})
}

func inline(s string) string {
	s = strings.Map(func(r rune) rune {
		if r >= phOpen && r <= '\uE002' {
			return -1 // never let input forge a placeholder
		}
		return r
	}, s)
	var in inliner
	if strings.Contains(s, "`") {
		s = in.codeSpans(s)
	}
	if strings.Contains(s, "](") {
		s = link.ReplaceAllStringFunc(s, func(m string) string {
			sm := link.FindStringSubmatch(m)
			return in.hold(slackLinkTo(sm[3], in.label(sm[2])))
		})
	}
	if strings.Contains(s, "<") {
		s = slackLink.ReplaceAllStringFunc(s, func(m string) string {
			sm := slackLink.FindStringSubmatch(m)
			return in.hold(slackLinkTo(sm[1], in.label(sm[2])))
		})
		s = mention.ReplaceAllStringFunc(s, in.hold)
		s = htmlBreak.ReplaceAllString(s, "\n")
	}
	if strings.Contains(s, "http") {
		s = bareURL.ReplaceAllStringFunc(s, func(u string) string { return in.hold(Escape(u)) })
	}
	s = emphasis(Escape(s))
	if len(in.held) == 0 {
		return s
	}
	return in.restore(s)
}

// codeSpans holds each `code span` (a run of backticks to the next run of the same
// length), escaped and otherwise as written.
func (in *inliner) codeSpans(s string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '`')
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		n := runLen(s[i:], '`')
		end := closingRun(s[i+n:], n)
		if end < 0 { // unmatched: literal backticks
			b.WriteString(s[:i+n])
			s = s[i+n:]
			continue
		}
		code := s[i+n : i+n+end]
		ticks := "`"
		if strings.Contains(code, "`") {
			ticks = s[i : i+n]
		}
		b.WriteString(s[:i])
		b.WriteString(in.hold(ticks + Escape(code) + ticks))
		s = s[i+n+end+n:]
	}
}

func runLen(s string, c byte) int {
	n := 0
	for n < len(s) && s[n] == c {
		n++
	}
	return n
}

// closingRun returns the offset in s of the first run of exactly n backticks, or -1.
func closingRun(s string, n int) int {
	for i := 0; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		r := runLen(s[i:], '`')
		if r == n {
			return i
		}
		i += r
	}
	return -1
}

// label converts a link's text: escaped, emphasis converted.
func (in *inliner) label(s string) string {
	return emphasis(Escape(strings.TrimSpace(s)))
}

// slackLinkTo formats <url|label>, or <url> without a label. URLs that Slack would not
// link (relative paths, anchors) keep only their label.
func slackLinkTo(url, label string) string {
	if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") && !strings.HasPrefix(url, "mailto:") {
		if label == "" {
			return Escape(url)
		}
		return label
	}
	url = urlEscaper.Replace(url)
	if label == "" || label == url {
		return "<" + url + ">"
	}
	return "<" + url + "|" + label + ">"
}

// emphasis converts Markdown emphasis to Slack's in escaped text.
func emphasis(s string) string {
	if !strings.ContainsAny(s, "*_~") {
		return s
	}
	s = boldItalic.ReplaceAllString(s, boldTag+"_${1}_"+boldTag)
	s = boldStar.ReplaceAllString(s, boldTag+"${1}"+boldTag)
	s = replaceAtWordBounds(s, boldUnder, func(inner string) string { return boldTag + inner + boldTag })
	s = replaceAtWordBounds(s, italicStar, func(inner string) string { return "_" + inner + "_" })
	s = strike.ReplaceAllString(s, "~${1}~")
	return strings.ReplaceAll(s, boldTag, "*")
}

// replaceAtWordBounds replaces the matches of re (whose group 1 is the emphasised
// text) that are not inside a word, so snake_case and 2*3*4 stay as they are.
func replaceAtWordBounds(s string, re *regexp.Regexp, repl func(inner string) string) string {
	matches := re.FindAllStringSubmatchIndex(s, -1)
	if matches == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range matches {
		before, _ := utf8.DecodeLastRuneInString(s[:m[0]])
		after, _ := utf8.DecodeRuneInString(s[m[1]:])
		if isWordRune(before) || isWordRune(after) {
			continue
		}
		b.WriteString(s[last:m[0]])
		b.WriteString(repl(s[m[2]:m[3]]))
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

func isWordRune(r rune) bool {
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_')
}
