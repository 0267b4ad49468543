package demo

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/threadwright/threadwright/conversation/workflow"
	"github.com/threadwright/threadwright/internal/textcut"
)

// The blog's article brief (blog.yaml's brief: auto, from the approved outline) and
// what the later artifacts take from it and from the fetched sources.

// briefLineRe reads a line of the brief's "## Key messages" or "## Words per
// section": "- **Heading**: text".
var briefLineRe = regexp.MustCompile(`^- \*\*(.+)\*\*: (.+)$`)

// wordBudget splits the target length into a conclusion and n equal sections, both
// rounded to ten words.
func wordBudget(total, n int) (perSection, conclusion int) {
	conclusion = min(max(total*8/100, 50), 250)
	conclusion = (conclusion + 5) / 10 * 10
	if n <= 0 {
		return 0, conclusion
	}
	perSection = ((total-conclusion)/n + 5) / 10 * 10
	return perSection, conclusion
}

// articleBrief is what the article and the drafts take from the brief.
type articleBrief struct {
	keywords []string
	messages map[string]string // heading key → key message
	words    map[string]int    // heading key → words
}

func (b articleBrief) message(title string) string { return b.messages[titleKey(title)] }

// briefTask writes the blog's brief and reads it back for the article.
type briefTask struct{ *workflowTask }

// articleBrief reads the approved brief of the prompt, or makes one from the outline
// when there is none.
func (t briefTask) articleBrief() articleBrief {
	text := t.approvedOf(blogBrief)
	if text == "" {
		text = t.writeBrief()
	}
	return parseBrief(text)
}

// parseBrief reads a brief in writeBrief's shape: the keywords under "## Keywords",
// the key messages under "## Key messages" and the words under "## Words per section".
func parseBrief(text string) articleBrief {
	b := articleBrief{messages: map[string]string{}, words: map[string]int{}}
	part := ""
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if h, ok := strings.CutPrefix(l, "## "); ok {
			part = strings.ToLower(strings.TrimSpace(h))
			continue
		}
		m := briefLineRe.FindStringSubmatch(l)
		switch {
		case part == "keywords" && l != "":
			for _, k := range strings.Split(l, ",") {
				if k = strings.TrimSpace(trimEnd(k)); k != "" {
					b.keywords = append(b.keywords, k)
				}
			}
		case part == "key messages" && m != nil:
			b.messages[titleKey(m[1])] = m[2]
		case part == "words per section" && m != nil:
			if n, err := strconv.Atoi(strings.ReplaceAll(numberRe.FindString(m[2]), ",", "")); err == nil {
				b.words[titleKey(m[1])] = n
			}
		}
	}
	if len(b.keywords) == 0 {
		b.keywords = []string{"blog article", "guide"}
	}
	return b
}

// keywords are the article's SEO keywords: five, about its topic.
func (t briefTask) keywords(o blogOutline) []string {
	if t.topic != "" && !ownTopic(blogWorkflow, t.topic) {
		low := strings.ToLower(t.topic)
		return []string{low, low + " guide", "getting started with " + low, low + " best practices", low + " pitfalls"}
	}
	return []string{"async stand-ups", "asynchronous stand-up meeting", "small team communication", "remote team updates", "daily stand-up alternatives"}
}

// writeBrief writes the article brief from the outline and the inputs, in the
// shape blog.yaml's brief asks for: "## Reader", "## Angle", "## Key messages" (one
// "- **<heading>**: <message>" per section), "## Tone" (with the layout, when given),
// "## Keywords" (five, comma-separated) and "## Words per section" (one "- **<heading>**:
// about <n> words" per section and the conclusion, then the total).
func (t briefTask) writeBrief() string {
	o := t.outline()
	total := t.wordcount()
	per, conclusion := wordBudget(total, len(o.Sections))
	audience := orDefault(o.Audience, "Readers new to the subject who want practical steps.")
	tone := "Clear, friendly and practical: an experienced colleague talking to the reader, with short sentences, active verbs, concrete examples and no hype."
	if layout := readInput(t.system, "layout"); layout != "" {
		tone += " Layout: " + sentence(layout)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## Reader\n%s\n\n## Angle\n%s\n\n## Key messages", sentence(audience), sentence(orDefault(o.Angle, "A practical guide, step by step.")))
	for _, s := range o.Sections {
		fmt.Fprintf(&b, "\n- **%s**: %s", trimEnd(s.Title), t.keyMessage(s))
	}
	fmt.Fprintf(&b, "\n\n## Tone\n%s\n\n## Keywords\n%s\n\n## Words per section", tone, strings.Join(t.keywords(o), ", "))
	for _, s := range o.Sections {
		fmt.Fprintf(&b, "\n- **%s**: about %d words", trimEnd(s.Title), per)
	}
	fmt.Fprintf(&b, "\n- **Conclusion**: about %d words\n\nThe body is about %d words long: %d sections of about %d words and a conclusion of about %d.", conclusion, total, len(o.Sections), per, conclusion)
	return b.String()
}

// keyMessage is a section's key message: the first sentence of its brief in the
// outline, or of its first note.
func (t briefTask) keyMessage(s workflow.Item) string {
	if m := sentence(firstSentences(oneLine(s.Body), 1)); m != "" {
		return m
	}
	if notes := cannedNotes(s.Title); len(notes) > 0 {
		return sentence(notes[0].Fact)
	}
	return "What the reader should take away from “" + trimEnd(s.Title) + "”."
}

// fetchedPage is one page of the sources: "### title", "Source: url", its text.
type fetchedPage struct{ Title, URL, Text string }

// fetchedPages reads the pages of a sources text, leaving out the ones not fetched.
func fetchedPages(text string) []fetchedPage {
	var out []fetchedPage
	var cur *fetchedPage
	var body []string
	flush := func() {
		if cur != nil {
			cur.Text = strings.TrimSpace(strings.Join(body, "\n"))
			if cur.URL != "" && cur.Text != "" && !strings.HasPrefix(cur.Text, "Not fetched:") {
				out = append(out, *cur)
			}
		}
		cur, body = nil, nil
	}
	for _, l := range strings.Split(text, "\n") {
		if h, ok := strings.CutPrefix(l, "### "); ok {
			flush()
			cur = &fetchedPage{Title: strings.TrimSpace(h)}
			continue
		}
		if cur == nil {
			continue
		}
		if u, ok := strings.CutPrefix(l, "Source: "); ok && cur.URL == "" {
			cur.URL = strings.TrimSpace(u)
			continue
		}
		body = append(body, l)
	}
	flush()
	return out
}

// quoteSource quotes one sentence of the first fetched page that has one of 8 to 35
// words and is not one of the notes' facts (the draft states those already), with its
// URL as the citation; "" when there is none. The demo's own pages (SourceFetcher)
// are quoted like any other; another example.com page is a placeholder and is not.
func quoteSource(text string, notes []researchNote) string {
	said := make(map[string]bool, len(notes))
	for _, n := range notes {
		said[titleKey(n.Fact)] = true
	}
	for _, p := range fetchedPages(text) {
		if !isDemoSource(p.URL) && (strings.Contains(p.URL, "://example.com/") || strings.Contains(p.URL, "://www.example.com/")) {
			continue
		}
		for _, s := range splitSentences(oneLine(p.Text)) {
			n := wordCount(s)
			if n < 8 || n > 35 || strings.ContainsAny(s, "“”\"()[]") || said[titleKey(s)] {
				continue
			}
			name := p.Title
			if name == "" || name == p.URL {
				name = "one source"
			} else {
				name = "“" + textcut.Ellipsis(name, 80, unicode.IsSpace) + "”"
			}
			return fmt.Sprintf("As %s puts it: “%s”%s.", name, trimEnd(s), researchNote{URL: p.URL}.citation())
		}
	}
	return ""
}
