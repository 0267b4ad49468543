package demo

import (
	"fmt"
	"hash/fnv"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/threadwright/threadwright/conversation/workflow"
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

// --- Items of the foreach artifacts ---

// item is the item a request is about: the line "Item <n> of <total>: <title>" of
// the task (prompts.Item), and the brief quoted under it.
type item struct {
	N, Total     int
	Title, Brief string
}

var itemRe = regexp.MustCompile(`Item (\d+) of (\d+): (.+)`)

// readItem reads the item line of a task (the user message; the system prompt's
// history may quote such lines from the thread), or returns nil.
func readItem(text string) *item {
	m := itemRe.FindStringSubmatchIndex(text)
	if m == nil {
		return nil
	}
	n, _ := strconv.Atoi(text[m[2]:m[3]])
	total, _ := strconv.Atoi(text[m[4]:m[5]])
	title := strings.Trim(strings.TrimSpace(text[m[6]:m[7]]), "*“”\"")
	return &item{N: n, Total: total, Title: title, Brief: quotedAfter(text[m[0]:], "Item ")}
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

// outline returns the outline in the prompt: the approved plan's title and "## "
// sections when its text is there, else the angle its excerpt names, else the first
// angle.
func (t *task) outline() blogOutline {
	text := t.approvedOf(blogPlan)
	var angle *blogAngle
	low := strings.ToLower(text)
	angles := t.angles()
	for i := range angles {
		if low != "" && strings.Contains(low, strings.ToLower(angles[i].ArticleTitle)) {
			angle = &angles[i]
			break
		}
	}
	var items []workflow.Item
	for _, it := range workflow.Items(text) {
		if it.Title != "" {
			items = append(items, it)
		}
	}
	if len(items) < 2 {
		if angle == nil {
			angle = &angles[0]
		}
		return angle.outline()
	}
	o := blogOutline{Sections: items, angle: angle}
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case o.Title == "" && strings.HasPrefix(l, "# "):
			o.Title = strings.TrimSpace(strings.TrimPrefix(l, "# "))
		case strings.HasPrefix(l, "Angle:"):
			o.Angle = strings.TrimSpace(strings.TrimPrefix(l, "Angle:"))
		case strings.HasPrefix(l, "Audience:"):
			o.Audience = strings.TrimSpace(strings.TrimPrefix(l, "Audience:"))
		}
	}
	if angle != nil {
		o.Title = orDefault(o.Title, angle.ArticleTitle)
		o.Angle = orDefault(o.Angle, angle.Angle)
		o.Audience = orDefault(o.Audience, angle.Audience)
	}
	o.Title = orDefault(o.Title, "Async Stand-ups for Small Teams")
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

// approvedOf returns the approved text of the blog artifact of kind k in the prompt.
func (t *task) approvedOf(k blogKind) string {
	for _, id := range t.approvedOrder {
		if blogKindOf(id, t.approvedTitle[id]) == k {
			return t.approved[id]
		}
	}
	return ""
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
	}
	return b.String()
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

// note is one research note: a fact and its source's URL ("" when it has none).
type note struct{ Fact, URL string }

const demoSourceBase = "https://example.com/demo/"

var (
	// noteRe reads a note of the research: "- Fact (demo source: https://…)".
	noteRe = regexp.MustCompile(`^\s*[-*]\s+(.+?)\s*\((?:demo )?source:\s*([^()\s][^()]*?)\)\.?\s*$`)
	bullet = regexp.MustCompile(`^\s*[-*]\s+(.+)$`)
)

func (n note) line() string {
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
func (n note) citation() string {
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
func cannedNotes(title string) []note {
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
	out := make([]note, len(facts))
	for i, f := range facts {
		out[i] = note{Fact: f.Text, URL: demoSourceBase + f.Slug}
	}
	return out
}

// notesFor returns the research notes of the section headed title: the bullets under
// that heading in an approved text of the prompt (the research artifact's items are
// joined under "## " headings), or the whole research text when the prompt gives only
// this item's part (a pipeline item's dependency), else the canned ones.
func (t *task) notesFor(title string) []note {
	research := t.approvedOf(blogResearch)
	texts := []string{research}
	for _, id := range t.approvedOrder {
		switch blogKindOf(id, t.approvedTitle[id]) {
		case blogSources, blogBrief, blogArticle:
			continue
		}
		texts = append(texts, t.approved[id])
	}
	key := titleKey(title)
	for _, text := range texts {
		for _, it := range workflow.Items(text) {
			if titleKey(it.Title) != key {
				continue
			}
			if notes := bulletNotes(it.Body); len(notes) > 0 {
				return notes
			}
		}
	}
	if t.item != nil && titleKey(t.item.Title) == key && len(headingStarts(research)) == 0 {
		if notes := bulletNotes(research); len(notes) > 0 {
			return notes
		}
	}
	return cannedNotes(title)
}

// bulletNotes reads the notes of a text's bullet list.
func bulletNotes(text string) []note {
	var out []note
	for _, l := range strings.Split(text, "\n") {
		if m := noteRe.FindStringSubmatch(l); m != nil {
			out = append(out, note{Fact: trimEnd(m[1]), URL: m[2]})
		} else if m := bullet.FindStringSubmatch(l); m != nil {
			out = append(out, note{Fact: trimEnd(m[1])})
		}
	}
	return out
}

// --- Section drafts ---

// Bounds of a section draft, in words: blog.yaml's sections criterion "Is 200 to 400
// words long", with a margin for the editor's cuts.
const (
	minSectionWords = 210
	maxSectionWords = 380
)

// draftExtras are what a section's draft takes from the article brief and the
// fetched sources, when the prompt has them.
type draftExtras struct {
	// Quote is a paragraph quoting a fetched page, with its citation; "" for none.
	Quote string
	// Words is the draft's target length (the brief's words for the section), kept
	// within the sections' bounds; 0 for the minimum.
	Words int
}

// sectionDraft writes a section's draft from its research notes: the pool's lead,
// the notes as sentences citing their sources as Markdown links, a quote from a
// fetched source, its practical advice and its close; a section the pool does not
// know gets generic ones. It is lengthened towards the brief's words for the section,
// within minSectionWords and maxSectionWords. The draft has no heading and holds the
// wordy phrases the editor pass removes.
func sectionDraft(title, brief string, notes []note, x draftExtras) string {
	s, ok := sectionByTitle(title)
	if !ok {
		s = genericSection(title, brief)
	}
	var evidence []string
	for i, n := range notes[:min(len(notes), 4)] {
		sentence := trimEnd(n.Fact)
		if i == 1 {
			sentence = "On top of that, " + lowerFirst(sentence)
		}
		evidence = append(evidence, sentence+n.citation()+".")
	}
	paras := []string{s.Lead}
	if len(evidence) > 0 {
		paras = append(paras, "The evidence is actually quite consistent here. "+strings.Join(evidence, " "))
	}
	if x.Quote != "" {
		paras = append(paras, x.Quote)
	}
	paras = append(paras, s.Practice, s.Close)
	target := min(max(x.Words, minSectionWords), maxSectionWords)
	pads := append(slices.Clone(blogPads), articlePads...)
	for i := 0; i < len(pads); i++ {
		n := wordCount(editSection(strings.Join(paras, "\n\n")))
		if n >= target || n+wordCount(pads[i]) > maxSectionWords {
			break
		}
		paras[len(paras)-1] += " " + pads[i]
	}
	for len(paras) > 3 && wordCount(editSection(strings.Join(paras, "\n\n"))) > maxSectionWords {
		paras = append(paras[:len(paras)-2], paras[len(paras)-1]) // the practice goes first
	}
	return strings.Join(paras, "\n\n")
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

// properNouns keep their capital where a sentence is joined to another.
var properNouns = map[string]bool{"Slack": true, "Slack's": true, "Fernhill": true, "Lisbon": true, "Berlin": true, "Toronto": true, "I": true}

// lowerFirst lowers the first letter of s, unless its first word is a name or an
// abbreviation.
func lowerFirst(s string) string {
	word, _, _ := strings.Cut(s, " ")
	if properNouns[strings.TrimRight(word, ",:;")] {
		return s
	}
	r, size := utf8.DecodeRuneInString(s)
	if next, _ := utf8.DecodeRuneInString(s[size:]); unicode.IsUpper(next) {
		return s // "API", "UK"
	}
	return string(unicode.ToLower(r)) + s[size:]
}

func wordCount(s string) int { return len(strings.Fields(s)) }

// --- The blog's texts ---

// blogText writes or revises the text of a blog artifact: the outline, an item's
// research notes, an item's draft or its edit, or the article.
func (t *task) blogText(revise bool) string {
	cur := strings.TrimSpace(notesRe.ReplaceAllString(quotedAfter(t.text, "The current text:"), ""))
	instr := quotedAfter(t.text, "The team's instructions:")
	if revise {
		instr = quotedAfter(t.text, "The team's request:")
	}
	title, brief := t.itemTitle(), ""
	if t.item != nil {
		brief = t.item.Brief
	}
	switch t.blog {
	case blogPlan:
		if revise && cur != "" {
			return reviseOutline(cur, instr)
		}
		angles := t.angles()
		a := &angles[0]
		if sel, ok := selectedOption(t.text); ok {
			if found := angleByOption(angles, sel.Title); found != nil {
				a = found
			}
		} else if prev := strings.ToLower(quotedAfter(t.text, "An earlier version of this")); prev != "" {
			for i := range angles {
				if strings.Contains(prev, strings.ToLower(angles[i].ArticleTitle)) {
					a = &angles[i]
				}
			}
		}
		return writeOutline(a, instr)
	case blogResearch:
		if revise && cur != "" {
			return editSection(cur)
		}
		if found := t.resultNotes(); len(found) > 0 {
			return foundNotes(found)
		}
		return researchNotes(title)
	case blogSources:
		return t.unfetchedSources()
	case blogBrief:
		if revise && cur != "" {
			return editSection(cur)
		}
		return t.writeBrief()
	case blogSections:
		if revise && cur != "" {
			return editSection(cur)
		}
		return sectionDraft(title, brief, t.notesFor(title), t.draftExtras(title))
	default: // blogArticle
		switch {
		case revise && isEnhance(instr) && cur != "":
			return enhanceArticle(cur)
		case revise:
			return t.reviseArticle(instr)
		}
		note := ""
		if instr = trimEnd(oneLine(instr)); instr != "" {
			note = "_Written as asked: " + instr + "._"
		}
		return t.writeArticle(articleOptions{shorter: wantsShorter(instr), longer: wantsLonger(instr), note: note})
	}
}

// itemTitle is the title of the request's item, or of the artifact without one.
func (t *task) itemTitle() string {
	if t.item != nil && t.item.Title != "" {
		return t.item.Title
	}
	return orDefault(t.artifactTitle, "this section")
}

// blogSummary writes the report's summary of the blog article.
func (t *task) blogSummary() string {
	o := t.outline()
	var titles []string
	for _, s := range o.Sections {
		titles = append(titles, trimEnd(s.Title))
	}
	angle := sentence(o.Angle)
	if angle != "" {
		angle = " " + angle
	}
	return fmt.Sprintf("“%s” is a blog article for small teams on running their stand-ups asynchronously.%s "+
		"Its %d sections (%s) were researched and drafted one by one, then put together with a meta description, a TL;DR and references; "+
		"the offline demo model wrote it, so its facts are unchecked and its sources are placeholders.",
		o.Title, angle, len(titles), strings.Join(titles, "; "))
}

// --- Evaluation ---

var (
	sectionCountRe = regexp.MustCompile(`(?i)(\d+) to (\d+) sections`)
	wordRangeRe    = regexp.MustCompile(`(?i)(\d[\d,]*)\s*(?:to|–|-|and)\s*(\d[\d,]*) words`)
	charLimitRe    = regexp.MustCompile(`(?i)at most (\d+) characters`)
	numberedRe     = regexp.MustCompile(`^(\d+)[.)]\s`)
)

// checkBlog checks the blog's criteria that can be checked on the text: for the
// article (kind), those of checkArticle; for every artifact, the number of sections,
// a word range (per item for a text of joined items), the meta description's length,
// the TL;DR's bullets and the references against the citations. reason is "" for
// other criteria.
func checkBlog(desc, text string, kind blogKind, wordcount int) (pass bool, reason string) {
	text = strings.TrimSpace(notesRe.ReplaceAllString(text, ""))
	low := strings.ToLower(desc)
	if kind == blogArticle {
		if pass, reason := checkArticle(low, desc, text, wordcount); reason != "" {
			return pass, reason
		}
	}
	switch {
	case sectionCountRe.MatchString(desc):
		m := sectionCountRe.FindStringSubmatch(desc)
		lo, _ := strconv.Atoi(m[1])
		hi, _ := strconv.Atoi(m[2])
		n := len(headingStarts(text))
		if n >= lo && n <= hi {
			return true, fmt.Sprintf("Met: %d sections, each a “## ” heading with its brief (%d to %d asked).", n, lo, hi)
		}
		return false, fmt.Sprintf("%d sections, outside the %d to %d asked.", n, lo, hi)
	case wordRangeRe.MatchString(desc):
		m := wordRangeRe.FindStringSubmatch(desc)
		lo, _ := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
		hi, _ := strconv.Atoi(strings.ReplaceAll(m[2], ",", ""))
		return checkWords(text, lo, hi)
	case strings.Contains(low, "meta description"):
		limit := 160
		if m := charLimitRe.FindStringSubmatch(desc); m != nil {
			limit, _ = strconv.Atoi(m[1])
		}
		for _, l := range strings.Split(text, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(l), "Meta description:"); ok {
				n := utf8.RuneCountInString(strings.TrimSpace(v))
				if n <= limit && n > 0 {
					return true, fmt.Sprintf("Met: a meta description of %d characters (limit %d).", n, limit)
				}
				return false, fmt.Sprintf("The meta description has %d characters; the limit is %d.", n, limit)
			}
		}
		return false, "There is no line starting “Meta description:”."
	case strings.Contains(low, "tl;dr"):
		n := bulletsAfter(text, "TL;DR")
		if n >= 2 && n <= 3 {
			return true, fmt.Sprintf("Met: a TL;DR of %d bullets.", n)
		}
		return false, fmt.Sprintf("The TL;DR has %d bullets; two or three are asked.", n)
	case strings.Contains(low, "references") && strings.Contains(low, "numbered"):
		return checkReferences(text)
	}
	return true, ""
}

// checkWords checks that text, or each of its items when it joins items under "## "
// headings, has lo to hi words.
func checkWords(text string, lo, hi int) (bool, string) {
	items := workflow.Items(text)
	if len(headingStarts(text)) < 2 {
		items = []workflow.Item{{Body: text}}
	}
	least, most := -1, 0
	for _, it := range items {
		n := wordCount(it.Body)
		if n < lo || n > hi {
			where := "The text"
			if it.Title != "" {
				where = "“" + it.Title + "”"
			}
			return false, fmt.Sprintf("%s has %d words, outside the %d to %d asked.", where, n, lo, hi)
		}
		if least < 0 || n < least {
			least = n
		}
		most = max(most, n)
	}
	if len(items) == 1 {
		return true, fmt.Sprintf("Met: %d words (%d to %d asked).", least, lo, hi)
	}
	return true, fmt.Sprintf("Met: each of the %d sections has %d to %d words (%d to %d asked).", len(items), least, most, lo, hi)
}

// bulletsAfter counts the bullets right after the line that contains marker.
func bulletsAfter(text, marker string) int {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if !strings.Contains(l, marker) {
			continue
		}
		n := 0
		for _, b := range lines[i+1:] {
			if !bullet.MatchString(b) {
				break
			}
			n++
		}
		return n
	}
	return 0
}

// checkReferences checks that the text ends with a numbered "## References" list
// whose entries are exactly the citations [n] of the text.
func checkReferences(text string) (bool, string) {
	body, refs, ok := strings.Cut(text, "## References")
	if !ok {
		return false, "There is no “## References” section."
	}
	listed := map[string]bool{}
	for _, l := range strings.Split(refs, "\n") {
		if m := numberedRe.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			listed[m[1]] = true
		}
	}
	cited := map[string]bool{}
	for _, m := range citationRe.FindAllStringSubmatch(body, -1) {
		cited[m[1]] = true
	}
	for n := range cited {
		if !listed[n] {
			return false, "Citation [" + n + "] has no entry in the references."
		}
	}
	for n := range listed {
		if !cited[n] {
			return false, "Reference " + n + " is never cited in the text."
		}
	}
	if len(listed) == 0 {
		return false, "The references list is empty."
	}
	return true, fmt.Sprintf("Met: %d numbered references, each cited in the text.", len(listed))
}

// checkArticle checks the article's criteria that blog.yaml's checks also run: its
// length against the wordcount input, the meta keywords and image description lines,
// the title, and the table of contents, conclusion and references headings. reason is
// "" for other criteria.
func checkArticle(low, desc, text string, wordcount int) (pass bool, reason string) {
	switch {
	case strings.Contains(low, "word count"):
		return checkWordcount(desc, text, wordcount)
	case strings.Contains(low, "meta keywords"):
		return checkLine(text, "Meta keywords:")
	case strings.Contains(low, "image description"):
		return checkLine(text, "Image description:")
	case strings.Contains(low, "table of contents"):
		return checkHeading(text, "Table of contents")
	case strings.Contains(low, "title") && strings.Contains(low, "heading"):
		return checkLine(text, "# ")
	case strings.Contains(low, "conclusion") && !strings.Contains(low, "outline"):
		return checkHeading(text, "Conclusion")
	case strings.Contains(low, "references") && !strings.Contains(low, "numbered"):
		return checkHeading(text, "References")
	}
	return true, ""
}

var tolerancePercentRe = regexp.MustCompile(`(\d+)\s*%`)

// checkWordcount checks that the article's body (bodyWords) is within the
// criterion's percentage (default 15) of the target length.
func checkWordcount(desc, text string, target int) (bool, string) {
	tol := 15
	if m := tolerancePercentRe.FindStringSubmatch(desc); m != nil {
		tol, _ = strconv.Atoi(m[1])
	}
	n := bodyWords(text, bodyExcluded)
	lo, hi := target*(100-tol)/100, target*(100+tol)/100
	if n >= lo && n <= hi {
		return true, fmt.Sprintf("Met: the body has %d words; the target is %d ± %d%% (%d to %d).", n, target, tol, lo, hi)
	}
	return false, fmt.Sprintf("The body has %d words; the target is %d ± %d%% (%d to %d).", n, target, tol, lo, hi)
}

// checkLine checks that text has a line starting with prefix, with text after it.
func checkLine(text, prefix string) (bool, string) {
	for _, l := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), prefix); ok && strings.TrimSpace(v) != "" {
			return true, "Met: the line “" + cutRunes(strings.TrimSpace(l), 80) + "”."
		}
	}
	return false, "There is no line starting “" + strings.TrimSpace(prefix) + "” with text after it."
}

// checkHeading checks that text has a Markdown heading titled title.
func checkHeading(text, title string) (bool, string) {
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "#") && strings.EqualFold(strings.TrimSpace(strings.TrimLeft(l, "#")), title) {
			return true, "Met: a “" + title + "” heading."
		}
	}
	return false, "There is no “" + title + "” heading."
}

// demoFailingItem is the blog research item that fails until the recovery agent has
// rewritten its instructions, so the playground shows retries and recovery.
const demoFailingItem = 3

// recoveredMarker is in the instructions the recovery agent writes for research
// (recovery), and so in the last try's task.
const recoveredMarker = "Try the queries below before giving up"

// researchFails reports whether this research write fails: the third section's,
// until its instructions are the recovery agent's. Its first two tries fail, the
// recovery agent rewrites them, and the last try succeeds.
func (t *task) researchFails() bool {
	return t.blog == blogResearch && t.item != nil && t.item.N == demoFailingItem &&
		!strings.Contains(quotedAfter(t.text, "The team's instructions:"), recoveredMarker) &&
		strings.Contains(t.text, "failure")
}

// researchFailure is the failure the model reports for it.
func (t *task) researchFailure() string {
	return fmt.Sprintf("Demo failure, to show retries: the broad searches for “%s” found only general remote-work advice, nothing specific to this section.", trimEnd(t.itemTitle()))
}

// --- The recovery agent ---

type recoveryArgs struct {
	Instructions string   `json:"instructions"`
	Queries      []string `json:"queries"`
	Rationale    string   `json:"rationale"`
}

// recovery rewrites the instructions of the failing item (commit_recovery_plan):
// narrower instructions for its title, two more specific queries when the writer
// searches (research, or tools listed for the last try), and why that should work.
func (t *task) recovery() recoveryArgs {
	title := t.itemTitle()
	where := "“" + orDefault(t.artifactTitle, "the artifact") + "”"
	if t.item != nil {
		where = fmt.Sprintf("item %d of %d of %s", t.item.N, t.item.Total, where)
	}
	topic := t.workflow
	if t.blog != blogNone {
		topic = "async stand-ups for small teams"
	}
	searching := t.blog == blogResearch || strings.Contains(t.text, "The writer can call these tools")
	var out recoveryArgs
	switch {
	case searching:
		out.Instructions = fmt.Sprintf("Research only “%s” (%s), for an article on %s. Look for three or four concrete facts about it from team-practice guides, tool documentation and surveys of teams of three to ten people, from the last three years, and give each its URL. Leave out general remote-work advice that does not bear on this section. Try the queries below before giving up, and if they find nothing, report what was searched.",
			trimEnd(title), where, orDefault(topic, "the document's subject"))
		out.Queries = []string{
			fmt.Sprintf("%q %s", trimEnd(title), orDefault(topic, "guide")),
			fmt.Sprintf("%s small team written daily updates example", trimEnd(title)),
		}
	default:
		out.Instructions = fmt.Sprintf("Write only “%s” (%s), from the approved artifacts and the notes for it in the prompt. Keep to what the item's brief says it covers, use only facts that are already there, and mark anything uncertain “(to verify)” instead of leaving it out. Do not write the other items or a heading.",
			trimEnd(title), where)
		out.Queries = []string{}
	}
	failures := failuresIn(t.text)
	switch len(failures) {
	case 0:
		out.Rationale = "No error was recorded, so the new instructions narrow the task to this one item and say where to look and what to leave out."
	default:
		out.Rationale = fmt.Sprintf("The last try failed with “%s”; narrower instructions that name the item, where to look and what to leave out give the last try a clear target.",
			cutRunes(trimEnd(oneLine(failures[len(failures)-1])), 160))
	}
	return out
}

// failuresIn reads the failures listed under "Why the tries failed" (the
// recovery_plan template).
func failuresIn(text string) []string {
	i := strings.Index(text, "Why the tries failed")
	if i < 0 {
		return nil
	}
	var out []string
	for _, l := range strings.Split(text[i:], "\n")[1:] {
		l = strings.TrimSpace(l)
		if l == "" {
			break
		}
		if m := bullet.FindStringSubmatch(l); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}
