package demo

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/threadwright/threadwright/conversation/workflow"
	"github.com/threadwright/threadwright/internal/textcut"
)

// The blog's article (blog.yaml's article): the shape below, with a body (everything
// after the first "## " heading but the table of contents, the TL;DR and the
// references) fitted to the wordcount input within a few percent, so that the
// workflow's word_count check (±15%) passes:
//
//	# <Title>
//	Meta description: <at most 160 characters>
//	Meta keywords: k1, k2, k3, k4, k5
//	Image description: <one sentence>
//
//	## Table of contents
//	- <section>
//	- Conclusion
//
//	## TL;DR
//	- <bullet> (three)
//
//	## <section> (the outline's, in order, from the drafts)
//	## Conclusion
//	## References
//	1. <source>

// articleOptions are what a request asks of the article.
type articleOptions struct {
	shorter, longer bool
	// note is a line that quotes the request, put before the references; "" for none.
	note string
}

// articleSection is a section of the article being fitted: its heading and
// paragraphs, the citations still in the drafts' form.
type articleSection struct {
	title string
	intro string // the article's introduction, opening the first section; "" for none
	paras []string
	next  string // the transition to the next section; "" for the last
}

func (s *articleSection) text() string {
	paras := s.paras
	if s.intro != "" {
		paras = append([]string{s.intro}, paras...)
	}
	body := strings.Join(paras, "\n\n")
	if s.next != "" {
		body += " " + s.next
	}
	return "## " + s.title + "\n\n" + body
}

// words counts the section as it is printed: every citation becomes one "[n]".
func (s *articleSection) words() int {
	return wordCount(demoLinkRe.ReplaceAllString(s.text(), " [0]"))
}

// articleTask writes and revises the blog's article.
type articleTask struct{ *workflowTask }

// writeArticle assembles the article from the outline, the brief and the section
// drafts in the prompt (the sections artifact's items under their "## " headings; a
// section without a draft there is drafted and edited here from its notes), fitted to
// the wordcount input (shorter: 90% of it, longer: 108%): the drafts lose their middle
// paragraphs, then their last ones, then sentences, or gain the brief's key message
// and practical paragraphs, section by section. Citations are renumbered [1], [2], …
// in order of first use, and the references are exactly the sources cited.
func (t articleTask) writeArticle(opt articleOptions) string {
	o := t.outline()
	b := briefTask(t).articleBrief()
	drafts := map[string]string{}
	for _, it := range workflow.Items(t.approvedOf(blogSections)) {
		if body := strings.TrimSpace(it.Body); body != "" && !strings.HasPrefix(body, "_No result") {
			drafts[titleKey(it.Title)] = body
		}
	}
	secs := make([]articleSection, len(o.Sections))
	for i, s := range o.Sections {
		body, ok := drafts[titleKey(s.Title)]
		if !ok {
			body = editSection(sectionDraft(s.Title, s.Body, t.notesFor(s.Title), draftExtras{}))
		}
		secs[i] = articleSection{title: s.Title, paras: draftParagraphs(body)}
		if i+1 < len(o.Sections) {
			secs[i].next = transition(i, o.Sections[i+1].Title)
		}
	}
	if len(secs) > 0 {
		secs[0].intro = o.intro()
	}
	target := t.wordcount()
	switch {
	case opt.shorter:
		target = target * 90 / 100
	case opt.longer:
		target = target * 108 / 100
	}
	conclusion := o.conclusion()
	render := func() string { return t.renderArticle(o, b, secs, conclusion, opt.note) }
	concWords := bodyWords(render(), nil) - sectionsWords(secs)
	pads := func(i, round int) string {
		if round == 0 {
			if msg := b.message(secs[i].title); msg != "" {
				return "**The key point:** " + sentence(msg)
			}
			if brief := sentence(o.Sections[i].Body); brief != "" {
				return "**In short:** " + brief
			}
		}
		return articlePads[(i*3+round+padStart(secs[i].title))%len(articlePads)]
	}
	drafted := secs
	goal := target - concWords
	for range 3 { // each pass starts from the drafts, with a goal corrected by the last
		secs = make([]articleSection, len(drafted))
		for i, s := range drafted {
			s.paras = slices.Clone(s.paras)
			secs[i] = s
		}
		fitSections(secs, goal, pads)
		got := bodyWords(render(), bodyExcluded)
		if abs(got-target)*100 <= target*4 {
			break
		}
		goal += target - got
	}
	return render()
}

// sectionsWords counts the words of every section.
func sectionsWords(secs []articleSection) int {
	n := 0
	for i := range secs {
		n += secs[i].words()
	}
	return n
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// padStart spreads the padding paragraphs over the sections by their headings.
func padStart(title string) int {
	h := fnv.New32a()
	h.Write([]byte(titleKey(title)))
	return int(h.Sum32() % uint32(len(articlePads)))
}

// fitSections fits the sections to goal words in all, one after the other: each gets
// an equal share of what is left, so that one section's rounding is made up by the
// next.
func fitSections(secs []articleSection, goal int, pads func(i, round int) string) {
	left := goal
	for i := range secs {
		budget := left / (len(secs) - i)
		fitSection(&secs[i], budget, func(round int) string { return pads(i, round) })
		left -= secs[i].words()
	}
}

// maxPadRounds bounds the paragraphs a section gains.
const maxPadRounds = 40

// fitSection brings the section as close to budget words as its steps allow: it
// shortens (the introduction, the middle paragraphs from the last, the last paragraph,
// the evidence's last sentences, the lead's last sentences) or lengthens (a paragraph
// from pad after the lead and the evidence) one step at a time, each step only when it brings the
// count closer.
func fitSection(s *articleSection, budget int, pad func(round int) string) {
	for round := 0; round < maxPadRounds && s.words() < budget; round++ {
		p := pad(round)
		at := min(2+round, len(s.paras)) // after the lead and the evidence, in order
		grown := append(append(append([]string(nil), s.paras[:at]...), p), s.paras[at:]...)
		before := abs(s.words() - budget)
		old := s.paras
		s.paras = grown
		if abs(s.words()-budget) >= before {
			s.paras = old
			break
		}
	}
	for s.words() > budget {
		before := abs(s.words() - budget)
		if !shrinkOnce(s, func() bool { return abs(s.words()-budget) < before }) {
			break
		}
	}
}

// shrinkOnce makes the first shortening step that better holds, and reports whether
// one did.
func shrinkOnce(s *articleSection, better func() bool) bool {
	try := func(apply func() (undo func())) bool {
		undo := apply()
		if undo == nil {
			return false
		}
		if better() {
			return true
		}
		undo()
		return false
	}
	if s.intro != "" && try(func() func() {
		intro := s.intro
		s.intro = ""
		return func() { s.intro = intro }
	}) {
		return true
	}
	for i := len(s.paras) - 2; i >= 2; i-- { // the middle paragraphs, from the last
		if try(func() func() { return s.drop(i) }) {
			return true
		}
	}
	if len(s.paras) > 2 && try(func() func() { return s.drop(len(s.paras) - 1) }) {
		return true
	}
	for _, i := range []int{1, 0} { // the evidence keeps two sentences, the lead one
		keep := 2 - i
		if i < len(s.paras) && try(func() func() { return s.cutSentence(i, keep) }) {
			return true
		}
	}
	return false
}

// drop removes paragraph i and returns how to put it back.
func (s *articleSection) drop(i int) func() {
	old := s.paras
	s.paras = append(append([]string(nil), old[:i]...), old[i+1:]...)
	return func() { s.paras = old }
}

// cutSentence removes the last sentence of paragraph i when it has more than keep,
// and returns how to put it back (nil when it did not).
func (s *articleSection) cutSentence(i, keep int) func() {
	parts := splitSentences(s.paras[i])
	if len(parts) <= keep {
		return nil
	}
	old := s.paras[i]
	s.paras[i] = strings.Join(parts[:len(parts)-1], " ")
	return func() { s.paras[i] = old }
}

// renderArticle prints the article: the head, the table of contents, the TL;DR, the
// sections with their citations renumbered, the conclusion, the notes and the
// references.
func (t articleTask) renderArticle(o blogOutline, br articleBrief, secs []articleSection, conclusion, note string) string {
	var refs []string
	cite := func(text string) string {
		return demoLinkRe.ReplaceAllStringFunc(text, func(m string) string {
			sub := demoLinkRe.FindStringSubmatch(m)
			src := strings.TrimSpace(sub[1] + sub[2])
			n := 0
			for i, r := range refs {
				if r == src {
					n = i + 1
				}
			}
			if n == 0 {
				refs = append(refs, src)
				n = len(refs)
			}
			return " [" + strconv.Itoa(n) + "]"
		})
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\nMeta description: %s\nMeta keywords: %s\nImage description: %s\n\n## Table of contents\n",
		o.Title, o.meta(), strings.Join(br.keywords, ", "), t.imageDescription(o))
	for _, s := range secs {
		b.WriteString("- " + s.title + "\n")
	}
	b.WriteString("- Conclusion\n\n## TL;DR\n")
	for _, l := range t.tldr(o) {
		b.WriteString("- " + l + "\n")
	}
	for i := range secs {
		b.WriteString("\n" + cite(secs[i].text()) + "\n")
	}
	b.WriteString("\n## Conclusion\n\n" + conclusion)
	demoOnly := true
	for _, r := range refs {
		demoOnly = demoOnly && isDemoSource(r)
	}
	if demoOnly {
		b.WriteString("\n\n_Written by threadwright's offline demo model: the facts are plausible but unchecked, and every reference is a placeholder to replace before publishing._")
	} else {
		b.WriteString("\n\n_Written by threadwright's offline demo model from the notes and pages it was given: check every fact against its reference before publishing._")
	}
	if note != "" {
		b.WriteString("\n\n" + note)
	}
	b.WriteString("\n\n## References\n")
	if len(refs) == 0 {
		b.WriteString("1. " + demoSourceBase + "async-standups (demo source, a placeholder)")
	}
	for i, r := range refs {
		if i > 0 {
			b.WriteString("\n")
		}
		switch {
		case isDemoSource(r):
			fmt.Fprintf(&b, "%d. %s (demo source, a placeholder)", i+1, r)
		case strings.HasPrefix(r, "http://") || strings.HasPrefix(r, "https://"):
			fmt.Fprintf(&b, "%d. %s", i+1, r)
		default:
			fmt.Fprintf(&b, "%d. %s (knowledge base)", i+1, r)
		}
	}
	return b.String()
}

// imageDescription describes a header image for the article, in one sentence.
func (t articleTask) imageDescription(o blogOutline) string {
	if t.topic != "" && !ownTopic(blogWorkflow, t.topic) {
		return fmt.Sprintf("A calm, flat illustration of %s: a small team around one laptop, sketching a plan on a whiteboard, in soft blues and greens.", t.topic)
	}
	return "A calm, flat illustration of a small team's chat thread of short written updates next to an empty meeting-room calendar, in soft blues and greens."
}

// transition ends section i, leading to the next one.
func transition(i int, next string) string {
	forms := []string{
		"That brings us to the next step: %s.",
		"With that settled, turn to %s.",
		"Which leads to %s.",
		"One more piece completes the picture: %s.",
	}
	return fmt.Sprintf(forms[i%len(forms)], "“"+trimEnd(next)+"”")
}

// tldr returns the angle's bullets when the outline is the angle's, else one bullet
// per section (at most three) with the first of its notes, which its draft cites.
func (t articleTask) tldr(o blogOutline) []string {
	if o.canned() {
		return o.angle.TLDR
	}
	var out []string
	for _, s := range o.Sections[:min(3, len(o.Sections))] {
		fact := s.Body
		if notes := t.notesFor(s.Title); len(notes) > 0 {
			fact = notes[0].Fact
		}
		out = append(out, "**"+trimEnd(s.Title)+":** "+sentence(firstSentences(fact, 1)))
	}
	return out
}

// reviseArticle writes the article again, from the prompt, as the request asks
// (shorter: 90% of the target length; more detail: 108%), with a note that quotes
// the request, or names the criteria an automatic revision fixes, before the
// references.
func (t articleTask) reviseArticle(instr string) string {
	instr = trimEnd(oneLine(orDefault(instr, "clearer and stronger, same meaning")))
	if failed := failedCriteria(instr); len(failed) > 0 {
		instr = "meet " + strings.Join(failed, "; ")
	}
	return t.writeArticle(articleOptions{shorter: wantsShorter(instr), longer: wantsLonger(instr), note: "_Revised as asked: " + textcut.Ellipsis(instr, 300, unicode.IsSpace) + "._"})
}

// isEnhance reports whether a revision's instructions are an enhancement pass (the
// article's enhance prompt).
func isEnhance(instr string) bool {
	return strings.Contains(strings.ToLower(instr), "enhance")
}

// enhanceEdits are the enhancement pass's changes: tighter wording, the same facts.
var enhanceEdits = []string{
	" in order to ", " to ",
	" a number of ", " several ",
	" is able to ", " can ",
	" at the moment ", " now ",
	" really ", " ",
	" very ", " ",
	" quite ", " ",
	" actually ", " ",
	" simply ", " ",
	"That brings us to the next step: ", "Next: ",
	"One more piece completes the picture: ", "One more piece: ",
}

// enhanceText is the enhancement pass of a text other than the blog's article: an
// article-like text (with "## " sections) as enhanceArticle, another with every line's
// wording tightened (enhanceEdits).
func enhanceText(cur string) string {
	if len(headingStarts(cur)) > 0 {
		return enhanceArticle(cur)
	}
	lines := strings.Split(cur, "\n")
	for i, l := range lines {
		indent := l[:len(l)-len(strings.TrimLeft(l, " "))]
		lines[i] = indent + strings.TrimSpace(strings.NewReplacer(enhanceEdits...).Replace(" "+strings.TrimLeft(l, " ")+" "))
	}
	return strings.Join(lines, "\n")
}

// enhanceArticle is the enhancement pass: the article with tighter wording in its
// body (enhanceEdits), every line of its head, table of contents, TL;DR and
// references kept, and its length nearly the same.
func enhanceArticle(cur string) string {
	lines := strings.Split(strings.TrimSpace(cur), "\n")
	section := ""
	for i, l := range lines {
		if h, ok := strings.CutPrefix(l, "## "); ok {
			section = strings.TrimSpace(h)
			continue
		}
		if section == "" || strings.HasPrefix(l, "- ") || strings.HasPrefix(l, "_") || slicesContainsFold(bodyExcluded, section) {
			continue
		}
		lines[i] = strings.TrimSpace(strings.NewReplacer(enhanceEdits...).Replace(" " + l + " "))
	}
	return strings.Join(lines, "\n")
}

// draftParagraphs splits a section's draft into the paragraphs the article fits: a
// "### " heading goes with the paragraph after it, so that the lead-in stays first
// and the evidence second, as fitSection expects.
func draftParagraphs(body string) []string {
	var out []string
	heading := ""
	for _, p := range strings.Split(strings.TrimSpace(body), "\n\n") {
		switch {
		case strings.HasPrefix(p, "#"):
			heading += p + "\n\n"
		default:
			out = append(out, heading+p)
			heading = ""
		}
	}
	if heading != "" {
		out = append(out, strings.TrimSpace(heading))
	}
	return out
}
