package demo

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/threadwright/threadwright/conversation/workflow"
	"github.com/threadwright/threadwright/internal/textcut"
)

// The blog workflow's phases: the outline, research, sources and drafts of
// each section, the report's summary, and the demo's research failure with
// its recovery plan (commit_recovery_plan). The brief (blog_brief.go) and the
// article (blog_article.go) have their own jobs.

// blogTask answers the blog workflow's tasks: it writes each artifact, from
// the outline to the article (with briefTask and articleTask), the report's
// summary, and the research failure and recovery of the demo.
type blogTask struct{ *workflowTask }

// blogText writes or revises the text of a blog artifact: the outline, an item's
// research notes, an item's draft or its edit, or the article.
func (t blogTask) blogText(revise bool) string {
	cur := strings.TrimSpace(notesRe.ReplaceAllString(quotedAfter(t.text, "The current text:"), ""))
	instr := quotedAfter(t.text, "The team's instructions:")
	if revise {
		instr = quotedAfter(t.text, "The team's request:")
	}
	title, brief := t.itemTitle(), ""
	if t.item != nil {
		brief = planSection(t.item.Brief)
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
		return briefTask(t).writeBrief()
	case blogSections:
		switch {
		case revise && cur != "" && t.item != nil:
			return t.editDraft(cur)
		case revise && cur != "":
			return t.reviseSections(cur)
		}
		return sectionDraft(title, brief, t.notesFor(title), t.draftExtras(title))
	default: // blogArticle
		switch {
		case revise && isEnhance(instr) && cur != "":
			return enhanceArticle(cur)
		case revise:
			return articleTask(t).reviseArticle(instr)
		}
		note := ""
		if instr = trimEnd(oneLine(instr)); instr != "" {
			note = "_Written as asked: " + instr + "._"
		}
		return articleTask(t).writeArticle(articleOptions{shorter: wantsShorter(instr), longer: wantsLonger(instr), note: note})
	}
}

// blogSummary writes the report's summary of the blog article.
func (t blogTask) blogSummary() string {
	o := t.outline()
	var titles []string
	for _, s := range o.Sections {
		titles = append(titles, trimEnd(s.Title))
	}
	angle := sentence(o.Angle)
	if angle != "" {
		angle = " " + angle
	}
	about := "for small teams on running their stand-ups asynchronously"
	if t.topic != "" && !ownTopic(blogWorkflow, t.topic) {
		about = "on " + trimEnd(t.topic)
	}
	return fmt.Sprintf("“%s” is a blog article %s.%s "+
		"Its %d sections (%s) were researched and drafted one by one, then put together with a meta description, a TL;DR and references; "+
		"the offline demo model wrote it, so its facts are unchecked and its sources are placeholders.",
		o.Title, about, angle, len(titles), strings.Join(titles, "; "))
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
func (t blogTask) researchFails() bool {
	return t.blog == blogResearch && t.item != nil && t.item.N == demoFailingItem &&
		!strings.Contains(quotedAfter(t.text, "The team's instructions:"), recoveredMarker) &&
		strings.Contains(t.text, "failure")
}

// researchFailure is the failure the model reports for it.
func (t blogTask) researchFailure() string {
	return fmt.Sprintf("Demo failure, to show retries: the broad searches for “%s” found only general remote-work advice, nothing specific to this section.", trimEnd(t.itemTitle()))
}

type recoveryArgs struct {
	Instructions string   `json:"instructions"`
	Queries      []string `json:"queries"`
	Rationale    string   `json:"rationale"`
}

// recovery rewrites the instructions of the failing item (commit_recovery_plan):
// narrower instructions for its title, two more specific queries when the writer
// searches (research, or tools listed for the last try), and why that should work.
func (t blogTask) recovery() recoveryArgs {
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
			textcut.Ellipsis(trimEnd(oneLine(failures[len(failures)-1])), 160, unicode.IsSpace))
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

// draftExtras are what the draft of the section headed title takes from the approved
// sources: a quote from the first page fetched for it that says something its notes
// do not.
func (t blogTask) draftExtras(title string) draftExtras {
	return draftExtras{Quote: quoteSource(t.sourcesFor(title), t.notesFor(title))}
}

// sourcesFor returns the fetched sources of the section headed title: the item's
// part of the approved sources (a pipeline item's dependency), or its part under its
// "## " heading.
func (t blogTask) sourcesFor(title string) string {
	text := t.approvedOf(blogSources)
	if len(headingStarts(text)) == 0 {
		return text
	}
	for _, it := range workflow.Items(text) {
		if titleKey(it.Title) == titleKey(title) {
			return it.Body
		}
	}
	return ""
}

// unfetchedSources stands in for the sources phase, which no model writes: the URLs
// of the item's research notes, each marked as not fetched.
func (t blogTask) unfetchedSources() string {
	var b strings.Builder
	for _, n := range t.notesFor(t.itemTitle()) {
		if strings.HasPrefix(n.URL, "http") {
			fmt.Fprintf(&b, "### %s\nSource: %s\nNot fetched: the offline demo model does not fetch pages.\n\n", n.URL, n.URL)
		}
	}
	if b.Len() == 0 {
		return "No URLs were found in the notes."
	}
	return strings.TrimSpace(b.String())
}

// wrapUps are the sentence openers blog.yaml's no_wrap_up check bans (a sample).
var wrapUps = []string{"In conclusion", "To conclude", "In summary", "To summarize", "To summarise", "To sum up", "All in all", "In closing"}

// briefKeywords are the keywords of the approved brief, or nil without one.
func (t blogTask) briefKeywords() []string {
	text := t.approvedOf(blogBrief)
	if text == "" {
		return nil
	}
	return parseBrief(text).keywords
}

// editDraft is the sections' editor pass over one item's draft: tightened
// (editSection), with the brief's keywords that fall to this item (keyword k to item
// k mod total + 1) placed in its "### " heading (placeKeywords), which makes it
// SEO-friendly.
func (t blogTask) editDraft(cur string) string {
	var mine []string
	for k, kw := range t.briefKeywords() {
		if t.item.Total > 0 && k%t.item.Total == t.item.N-1 {
			mine = append(mine, kw)
		}
	}
	return placeKeywords(editSection(cur), mine)
}

// reviseSections is the automatic revision of the joined sections after a failing
// verdict: tightened, every sentence that opens with a wrap-up (wrapUps) left out,
// and every keyword of the brief the text lacks placed in the "### " heading of
// section k mod n (k the keyword's place in the brief, n the sections). The "## "
// headings stay as they are, so the text splits back into its items.
func (t blogTask) reviseSections(cur string) string {
	text := dropWrapUps(editSection(cur))
	starts := headingStarts(text)
	if len(starts) == 0 {
		return placeKeywords(text, t.briefKeywords())
	}
	parts := make([]string, len(starts))
	for i, at := range starts {
		end := len(text)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		parts[i] = strings.TrimSpace(text[at:end])
	}
	low := strings.ToLower(text)
	for k, kw := range t.briefKeywords() {
		if !strings.Contains(low, strings.ToLower(kw)) {
			i := k % len(parts)
			parts[i] = placeKeywords(parts[i], []string{kw})
		}
	}
	return strings.TrimSpace(text[:starts[0]] + strings.Join(parts, "\n\n"))
}

// placeKeywords puts the keywords text lacks into its first "### " heading:
// "### Async stand-ups and remote updates: what it looks like in practice".
func placeKeywords(text string, keywords []string) string {
	low := strings.ToLower(text)
	var missing []string
	for _, kw := range keywords {
		if !strings.Contains(low, strings.ToLower(kw)) {
			missing = append(missing, kw)
		}
	}
	if len(missing) == 0 {
		return text
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		h, ok := strings.CutPrefix(l, "### ")
		if !ok {
			continue
		}
		added := upperFirst(strings.Join(missing, " and "))
		if head, rest, ok := strings.Cut(h, ": "); ok {
			lines[i] = "### " + head + " and " + strings.Join(missing, " and ") + ": " + rest
		} else {
			lines[i] = "### " + added + ": " + lowerFirst(h)
		}
		break
	}
	return strings.Join(lines, "\n")
}

// dropWrapUps leaves out of text every sentence that opens with a wrap-up
// (wrapUps), and a paragraph left empty; headings are kept.
func dropWrapUps(text string) string {
	paras := strings.Split(text, "\n\n")
	out := paras[:0]
	for _, p := range paras {
		if strings.HasPrefix(p, "#") {
			out = append(out, p)
			continue
		}
		var kept []string
		for _, s := range splitSentences(p) {
			wrap := false
			for _, w := range wrapUps {
				if strings.HasPrefix(strings.ToLower(strings.TrimLeft(s, "*_ ")), strings.ToLower(w)) {
					wrap = true
				}
			}
			if !wrap {
				kept = append(kept, s)
			}
		}
		if len(kept) > 0 {
			out = append(out, strings.Join(kept, " "))
		}
	}
	return strings.Join(out, "\n\n")
}
