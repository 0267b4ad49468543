package demo

import (
	"fmt"
	"hash/fnv"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/threadwright/threadwright/conversation/workflow"
	"github.com/threadwright/threadwright/internal/textcut"
)

// blogWorkflow is the title of the built-in blog workflow (prompts/workflows/blog.yaml).
const blogWorkflow = "Blog article"

// blogKind is the part of the blog workflow an artifact is.
type blogKind int

const (
	blogNone     blogKind = iota // not the blog workflow, or an artifact it does not have
	blogPlan                     // the outline (choice)
	blogResearch                 // research notes, one item per section (auto, foreach)
	blogSources                  // the fetched pages, one item per section (auto, fetch: no model)
	blogBrief                    // the article brief (auto, from the outline)
	blogSections                 // section drafts, one item per section (auto, foreach, editor)
	blogArticle                  // the article (draft)
)

// blogKindOf recognises a blog artifact by its id (blog.yaml), else by its title.
func blogKindOf(id, title string) blogKind {
	switch id {
	case "plan", "outline":
		return blogPlan
	case "research", "notes":
		return blogResearch
	case "sources":
		return blogSources
	case "brief":
		return blogBrief
	case "sections", "drafts":
		return blogSections
	case "article":
		return blogArticle
	}
	low := strings.ToLower(title)
	switch {
	case strings.Contains(low, "outline"):
		return blogPlan
	case strings.Contains(low, "brief"):
		return blogBrief
	case strings.Contains(low, "research") || strings.Contains(low, "notes"):
		return blogResearch
	case strings.Contains(low, "source"):
		return blogSources
	case strings.Contains(low, "section") || strings.Contains(low, "draft"):
		return blogSections
	case strings.Contains(low, "article"):
		return blogArticle
	}
	return blogNone
}

// blogTheme holds the outline's options, so that options() proposes them like any
// canned choice; everything else of the blog is written by the functions below.
var blogTheme = theme{Artifacts: map[string]artifactContent{"plan": {Options: anglesOptions(blogAngles)}}}

// blogPlanContent is the outline's canned content.
var blogPlanContent = blogTheme.Artifacts["plan"]

// anglesOptions are the outline's options, one per angle: its working title, angle,
// reader and section headings.
func anglesOptions(angles []blogAngle) []option {
	out := make([]option, len(angles))
	for i, a := range angles {
		out[i] = option{
			Title: a.Option,
			Text: fmt.Sprintf("Working title: “%s”. Angle: %s Reader: %s Sections: %s.",
				a.ArticleTitle, a.Angle, a.Audience, strings.Join(a.sectionTitles(), "; ")),
		}
	}
	return out
}

func (a *blogAngle) sectionTitles() []string {
	if a.Custom != nil {
		out := make([]string, len(a.Custom))
		for i, s := range a.Custom {
			out[i] = s.Title
		}
		return out
	}
	out := make([]string, len(a.Sections))
	for i, k := range a.Sections {
		out[i] = blogPool[k].Title
	}
	return out
}

// angleByOption returns the angle of angles whose option is titled title.
func angleByOption(angles []blogAngle, title string) *blogAngle {
	for i := range angles {
		if strings.EqualFold(strings.TrimSpace(title), angles[i].Option) {
			return &angles[i]
		}
	}
	return nil
}

// sectionByTitle returns the pool's section headed title.
func sectionByTitle(title string) (blogSection, bool) {
	key := titleKey(title)
	for _, s := range blogPool {
		if titleKey(s.Title) == key {
			return s, true
		}
	}
	return blogSection{}, false
}

// titleKey is a heading compared loosely: lower case, letters and digits only.
func titleKey(s string) string {
	return strings.Join(tokens(strings.ToLower(s)), " ")
}

// --- The outline ---

// blogOutline is the outline the blog's later artifacts follow.
type blogOutline struct {
	Title, Angle, Audience string
	Sections               []workflow.Item // heading and brief
	// angle is the canned angle the outline was written from; nil when the team's
	// outline matches none.
	angle *blogAngle
}

func (a *blogAngle) outline() blogOutline {
	o := blogOutline{Title: a.ArticleTitle, Angle: a.Angle, Audience: a.Audience, angle: a}
	if a.Custom != nil {
		for _, s := range a.Custom {
			o.Sections = append(o.Sections, workflow.Item{Title: s.Title, Body: s.Brief})
		}
		return o
	}
	for _, k := range a.Sections {
		s := blogPool[k]
		o.Sections = append(o.Sections, workflow.Item{Title: s.Title, Body: s.Brief})
	}
	return o
}

// canned reports whether the outline's sections are its angle's, in order: the
// angle's TL;DR then matches the body.
func (o blogOutline) canned() bool {
	if o.angle == nil || o.angle.Custom != nil || len(o.Sections) != len(o.angle.Sections) {
		return false
	}
	for i, s := range o.Sections {
		if titleKey(s.Title) != titleKey(blogPool[o.angle.Sections[i]].Title) {
			return false
		}
	}
	return true
}

// writeOutline writes the outline from the chosen angle, in the shape blog.yaml asks
// for: "# Title", "Angle:", "Audience:", then one "## " heading per section with its
// brief. Asked for a shorter one, it keeps four sections.
func writeOutline(a *blogAngle, instr string) string {
	o := a.outline()
	if wantsShorter(instr) {
		o.Sections = o.Sections[:4]
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\nAngle: %s\nAudience: %s", o.Title, o.Angle, o.Audience)
	if instr = trimEnd(oneLine(instr)); instr != "" {
		b.WriteString("\n\n_Written as asked: " + instr + "._")
	}
	for _, s := range o.Sections {
		fmt.Fprintf(&b, "\n\n## %s\n%s", s.Title, s.Body)
		points, queries := planLists(a, s, o.Title)
		b.WriteString("\nKey points:")
		for _, p := range points {
			b.WriteString("\n- " + p)
		}
		b.WriteString("\nSearch queries:")
		for _, q := range queries {
			b.WriteString("\n- " + q)
		}
	}
	return b.String()
}

// planLists are an outline section's key points (its first three facts, shortened,
// else the sentences of its brief) and its search queries: its heading with the
// article's title, and its first key point, as key words.
func planLists(a *blogAngle, it workflow.Item, title string) (points, queries []string) {
	sec, ok := sectionByTitle(it.Title)
	for _, c := range a.Custom {
		if titleKey(c.Title) == titleKey(it.Title) {
			sec, ok = c, true
		}
	}
	if ok {
		for _, f := range sec.Facts[:min(len(sec.Facts), 3)] {
			points = append(points, trimEnd(textcut.Ellipsis(f.Text, 90, unicode.IsSpace)))
		}
	}
	if len(points) == 0 {
		for _, s := range splitSentences(oneLine(it.Body)) {
			points = append(points, trimEnd(s))
		}
	}
	queries = []string{keyWords(it.Title + " " + title)}
	if len(points) > 0 {
		if q := keyWords(points[0]); !slices.Contains(queries, q) {
			queries = append(queries, q)
		}
	}
	return points, queries
}

// planSection is what an outline section's body says it covers: the text before
// its "Key points:" and "Search queries:" lists (writeOutline).
func planSection(body string) string {
	for _, label := range []string{"\nKey points:", "\nSearch queries:"} {
		if i := strings.Index("\n"+body, label); i >= 0 {
			body = body[:max(i-1, 0)]
		}
	}
	return strings.TrimSpace(body)
}

// reviseOutline applies a request to an outline: shorter drops its last section (down
// to four), and a note quoting the request goes under the header, before the first
// section, so that no section's brief carries it.
func reviseOutline(cur, instr string) string {
	cur = strings.TrimSpace(notesRe.ReplaceAllString(cur, ""))
	instr = trimEnd(oneLine(orDefault(instr, "clearer and stronger, same meaning")))
	at := headingStarts(cur)
	if wantsShorter(instr) && len(at) > 4 {
		cur = strings.TrimSpace(cur[:at[len(at)-1]])
	}
	note := "_Revised as asked: " + instr + "._"
	if len(at) == 0 {
		return cur + "\n\n" + note
	}
	head, rest := strings.TrimSpace(cur[:at[0]]), cur[at[0]:]
	if head == "" {
		return note + "\n\n" + rest
	}
	return head + "\n\n" + note + "\n\n" + rest
}

var sectionHeadingRe = regexp.MustCompile(`(?m)^## \S`)

// headingStarts returns the offsets of the "## " headings of text.
func headingStarts(text string) []int {
	var out []int
	for _, m := range sectionHeadingRe.FindAllStringIndex(text, -1) {
		out = append(out, m[0])
	}
	return out
}

// --- Research notes ---

// researchNote is one research note: a fact and its source's URL ("" when it has none).
type researchNote struct{ Fact, URL string }

const demoSourceBase = "https://example.com/demo/"

var (
	// noteRe reads a note of the research: "- Fact (demo source: https://…)".
	noteRe = regexp.MustCompile(`^\s*[-*]\s+(.+?)\s*\((?:demo )?source:\s*([^()\s][^()]*?)\)\.?\s*$`)
	bullet = regexp.MustCompile(`^\s*[-*]\s+(.+)$`)
)

func (n researchNote) line() string {
	switch {
	case n.URL == "":
		return "- " + n.Fact
	case isDemoSource(n.URL):
		return "- " + n.Fact + " (demo source: " + n.URL + ")"
	}
	return "- " + n.Fact + " (source: " + n.URL + ")"
}

// isDemoSource reports whether url is one of the demo's placeholder sources.
func isDemoSource(url string) bool { return strings.HasPrefix(url, demoSourceBase) }

// citation is how a draft cites a note's source: a Markdown link, "demo source" for
// a placeholder, or the knowledge-base source in parentheses.
func (n researchNote) citation() string {
	switch {
	case n.URL == "":
		return ""
	case isDemoSource(n.URL):
		return " ([demo source](" + n.URL + "))"
	case strings.HasPrefix(n.URL, "http://") || strings.HasPrefix(n.URL, "https://"):
		return " ([source](" + n.URL + "))"
	}
	return " (source: " + n.URL + ")"
}

// researchNotes writes the notes of one section: three or four facts, each with
// its demo source, under a line that says they are canned.
func researchNotes(title string) string {
	var b strings.Builder
	b.WriteString("_Offline demo notes: nothing was searched; the facts are plausible but unchecked, and every source is a placeholder._\n")
	for _, n := range cannedNotes(title) {
		b.WriteString("\n" + n.line())
	}
	return b.String()
}

// cannedNotes are the notes of the pool's section headed title, or three generic
// ones chosen by the title.
func cannedNotes(title string) []researchNote {
	facts := make([]blogFact, 0, 4)
	if s, ok := sectionByTitle(title); ok {
		facts = s.Facts
	} else {
		h := fnv.New32a()
		h.Write([]byte(titleKey(title)))
		start := int(h.Sum32() % uint32(len(blogGenericFacts)))
		for i := range 3 {
			facts = append(facts, blogGenericFacts[(start+i)%len(blogGenericFacts)])
		}
	}
	out := make([]researchNote, len(facts))
	for i, f := range facts {
		out[i] = researchNote{Fact: f.Text, URL: demoSourceBase + f.Slug}
	}
	return out
}

// bulletNotes reads the notes of a text's bullet list.
func bulletNotes(text string) []researchNote {
	var out []researchNote
	for _, l := range strings.Split(text, "\n") {
		if m := noteRe.FindStringSubmatch(l); m != nil {
			out = append(out, researchNote{Fact: trimEnd(m[1]), URL: m[2]})
		} else if m := bullet.FindStringSubmatch(l); m != nil {
			out = append(out, researchNote{Fact: trimEnd(m[1])})
		}
	}
	return out
}

// --- Section drafts ---

// A section's draft has the shape blog.yaml's sections checks ask for: a lead-in of
// leadSentences sentences, then one "### " subsection of subsectionWords words
// (the checks allow 225 to 330: 250 to 300 ± 10%), kept within minSubsectionWords
// and maxSubsectionWords after the editor's cuts.
const (
	leadSentences      = 2
	subsectionWords    = 275
	minSubsectionWords = 255
	maxSubsectionWords = 300
)

// draftSubheading is the draft's "### " heading, which the editor pass makes
// SEO-friendly with the brief's keywords (placeKeywords).
const draftSubheading = "What it looks like in practice"

// draftExtras are what a section's draft takes from the fetched sources, when the
// prompt has them.
type draftExtras struct {
	// Quote is a paragraph quoting a fetched page, with its citation; "" for none.
	Quote string
}

// sectionDraft writes a section's draft from its research notes: the pool's lead
// (its first two sentences as the lead-in), then one "### " subsection: the rest of
// the lead and the notes as sentences citing their sources as Markdown links, a quote
// from a fetched source, its practical advice and its close; a section the pool does
// not know gets generic ones. The subsection is lengthened towards subsectionWords
// and kept at most maxSubsectionWords (the practice goes first). The draft has no
// "## " heading and holds the wordy phrases the editor pass removes.
func sectionDraft(title, brief string, notes []researchNote, x draftExtras) string {
	s, ok := sectionByTitle(title)
	if !ok {
		s = genericSection(title, brief)
	}
	lead := splitSentences(oneLine(s.Lead))
	var rest []string // the lead's other sentences open the subsection
	if len(lead) > leadSentences {
		rest, lead = lead[leadSentences:], lead[:leadSentences]
	}
	var evidence []string
	for i, n := range notes[:min(len(notes), 4)] {
		sentence := trimEnd(n.Fact)
		if i == 1 {
			sentence = "On top of that, " + lowerFirst(sentence)
		}
		evidence = append(evidence, sentence+n.citation()+".")
	}
	var paras []string
	switch {
	case len(evidence) > 0:
		paras = append(paras, strings.Join(append(rest, "The evidence is actually quite consistent here."), " ")+" "+strings.Join(evidence, " "))
	case len(rest) > 0:
		paras = append(paras, strings.Join(rest, " "))
	}
	if x.Quote != "" {
		paras = append(paras, x.Quote)
	}
	paras = append(paras, s.Practice, s.Close)
	words := func() int { return wordCount(editSection(strings.Join(paras, "\n\n"))) }
	for len(paras) > 2 && words() > maxSubsectionWords {
		paras = append(paras[:len(paras)-2], paras[len(paras)-1]) // the practice goes first
	}
	// The padding is a paragraph of its own before the close, the first one the
	// article drops when it fits the sections to its length.
	var pad []string
	n := words()
	for _, p := range append(slices.Clone(blogPads), articlePads...) {
		if n >= subsectionWords {
			break
		}
		if m := n + wordCount(editSection(p)); m <= maxSubsectionWords {
			pad, n = append(pad, p), m
		}
	}
	if len(pad) > 0 {
		paras = append(paras[:len(paras)-1], strings.Join(pad, " "), paras[len(paras)-1])
	}
	return strings.Join(lead, " ") + "\n\n### " + draftSubheading + "\n\n" + strings.Join(paras, "\n\n")
}

// genericSection is the draft's frame for a heading the pool does not know.
func genericSection(title, brief string) blogSection {
	about := sentence(firstSentences(oneLine(brief), 2))
	if about == "" {
		about = "It matters to any small team that wants its stand-ups to work without a daily meeting."
	}
	return blogSection{
		Title:    title,
		Lead:     "This part of the article is about “" + trimEnd(title) + "”. " + about + " The aim is practical: what to do, what to expect, and what to watch out for when a team of three to ten people tries it for the first time.",
		Practice: "Try it for two weeks before judging it. Write the agreement down where the whole team can see it, name one person who keeps an eye on it, and set a date to look back on it together. Small, visible agreements are easier to keep, and easier to change, than big plans announced once in a meeting.",
		Close:    "Start small, keep it visible, and let the team's experience decide what stays.",
	}
}

// editSection is the editor pass: the same text, tightened (blogEdits), with its
// white space normalised (one space between words, one blank line between blocks)
// and every line, fact and citation kept.
func editSection(text string) string {
	text = strings.NewReplacer(blogEdits...).Replace(strings.TrimSpace(text))
	var out []string
	for _, l := range strings.Split(text, "\n") {
		indent := l[:len(l)-len(strings.TrimLeft(l, " \t"))]
		switch l = strings.Join(strings.Fields(l), " "); {
		case l != "":
			out = append(out, indent+l)
		case len(out) > 0 && out[len(out)-1] != "":
			out = append(out, "")
		}
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// bodyExcluded are the sections that do not count as the article's body (blog.yaml's
// word_count check).
var bodyExcluded = []string{"Table of contents", "TL;DR", "References"}

// bodyWords counts the words of an article's body as the workflow's words check
// does: everything after the first "## " heading, without the sections whose
// headings are excluded. Words are runs of non-space characters.
func bodyWords(text string, exclude []string) int {
	lines := strings.Split(text, "\n")
	n, started, skip := 0, false, false
	for _, l := range lines {
		if title, ok := strings.CutPrefix(l, "## "); ok {
			started = true
			skip = false
			for _, e := range exclude {
				if strings.EqualFold(strings.TrimSpace(title), e) {
					skip = true
				}
			}
		}
		if started && !skip {
			n += wordCount(l)
		}
	}
	return n
}

var (
	// demoLinkRe matches a draft's citation, " ([demo source](https://…))" or
	// " ([source](https://…))", and the notes' forms, " (demo source: …)" and
	// " (source: …)".
	demoLinkRe = regexp.MustCompile(`\s*\((?:\[(?:demo )?source\]\((\S+?)\)|(?:demo )?source: ([^()\s][^()]*?))\)`)
	// citationRe matches a citation [n] of the article.
	citationRe = regexp.MustCompile(`\[(\d+)\]`)
)

func (o blogOutline) meta() string {
	if o.angle != nil {
		return o.angle.Meta
	}
	return textcut.Ellipsis(trimEnd(o.Title)+": a practical guide for small teams, in short sections with sources.", 160, unicode.IsSpace)
}

func (o blogOutline) intro() string {
	if o.angle != nil {
		return o.angle.Intro
	}
	lead := sentence(o.Angle)
	if lead == "" {
		lead = "Small teams can keep in sync without a daily meeting."
	}
	return lead + fmt.Sprintf(" This article covers it in %d short sections, each built on sourced notes, and ends with what to do next.", len(o.Sections))
}

func (o blogOutline) conclusion() string {
	if o.angle != nil {
		return o.angle.Conclusion
	}
	var titles []string
	for _, s := range o.Sections {
		titles = append(titles, "“"+trimEnd(s.Title)+"”")
	}
	return "Taken together, " + strings.Join(titles, ", ") + " make one point: small, written agreements that the whole team can see and change. Try them for a month, then decide together what to keep."
}
