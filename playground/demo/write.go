package demo

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// Writing an artifact (commit_artifact_final_text) of a built-in theme or of a
// custom workflow: from the chosen option or a canned draft, one item, a batch
// of items, a revision; and the report's summary (commit_final_docset).

// writeTask writes and revises the text of an artifact (a built-in theme's or
// a custom workflow's, not the blog's) and the report's summary.
type writeTask struct{ *workflowTask }

// write writes the artifact: from the chosen option, or the canned draft. An item of
// an artifact without canned content gets a generic draft of its own, without notes.
func (t writeTask) write() string {
	if t.item != nil && t.content == nil {
		return t.writeItem()
	}
	var text string
	if sel, ok := selectedOption(t.text); ok {
		text = t.writeChoice(sel)
	} else {
		text = t.writeDraft()
	}
	return t.apply(text, quotedAfter(t.text, "The team's instructions:"), "Written as asked")
}

func (t writeTask) writeChoice(sel option) string {
	lead := asAskedRe.ReplaceAllString(sel.Text, "")
	if rest, ok := strings.CutPrefix(lead, sel.Title+": "); ok {
		lead = upperFirst(rest) // "Forkcast: a blend…" under the bold title "Forkcast."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "**%s.** %s", trimEnd(sel.Title), lead)
	points := t.genericPoints()
	if t.content != nil {
		for _, o := range t.content.Options {
			if strings.EqualFold(o.Title, sel.Title) {
				points = o.Points
				break
			}
		}
	}
	b.WriteString("\n")
	for _, p := range points {
		b.WriteString("\n- " + t.fill(p))
	}
	if t.content != nil && t.content.Close != "" {
		b.WriteString("\n\n" + t.fill(t.content.Close))
	}
	return b.String()
}

func (t writeTask) writeDraft() string {
	if t.content != nil && t.content.Text != "" {
		return t.fill(t.content.Text)
	}
	desc := sentence(t.description)
	if desc == "" {
		desc = "What the team needs from this part of the document."
	}
	var b strings.Builder
	b.WriteString(desc)
	b.WriteString("\n")
	for _, p := range t.genericPoints() {
		b.WriteString("\n- " + p)
	}
	return b.String()
}

// writeItem writes one item of a foreach artifact without canned content: its title,
// its brief (or the artifact's description) and the generic points.
func (t writeTask) writeItem() string {
	about := sentence(firstSentences(oneLine(planSection(t.item.Brief)), 2))
	if about == "" {
		about = orDefault(sentence(t.description), "What the team needs from this part of the document.")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "**%s.** %s\n", trimEnd(t.item.Title), about)
	for _, p := range t.genericPoints() {
		b.WriteString("\n- " + p)
	}
	return b.String()
}

// genericPoints are the bullet points of an artifact without canned content.
func (t writeTask) genericPoints() []string {
	var pts []string
	if t.topic != "" {
		pts = append(pts, "**About:** "+sentence(t.topic))
	}
	if len(t.approvedOrder) > 0 {
		var titles []string
		for _, id := range t.approvedOrder {
			titles = append(titles, t.approvedTitle[id])
		}
		pts = append(pts, "**Builds on:** the approved "+strings.Join(titles, ", ")+".")
	}
	if d := sentence(t.description); d != "" {
		pts = append(pts, "**What it covers:** "+d)
	}
	return append(pts,
		"**First step:** turn this into one concrete action with an owner and a date.",
		"**To confirm:** names, figures and dates, marked as placeholders until someone checks them.")
}

// revise applies the team's request to the current text. An item's revision is a
// workflow's editor pass: the text comes back tightened, without a note.
func (t writeTask) revise() string {
	cur := notesRe.ReplaceAllString(quotedAfter(t.text, "The current text:"), "")
	if t.item != nil && strings.TrimSpace(cur) != "" {
		return editSection(cur)
	}
	instr := quotedAfter(t.text, "The team's request:")
	if isEnhance(instr) && strings.TrimSpace(cur) != "" {
		// An enhancement pass (a workflow's enhance prompt): the same text, its
		// wording tightened, without a note.
		return enhanceText(strings.TrimSpace(cur))
	}
	if instr == "" {
		instr = "clearer and stronger, same meaning"
	}
	ph := workflow.Placeholders(cur)
	if len(ph) > 0 && strings.Contains(instr, "placeholders") {
		cur = fillSlots(strings.TrimSpace(cur), ph)
	}
	if failed := failedCriteria(instr); len(failed) > 0 {
		// The engine's automatic revision after a failing verdict, which nobody asked
		// for: no "as asked" note (the card lists what the evaluation found fixed).
		return t.apply(strings.TrimSpace(cur), "meet "+strings.Join(failed, "; "), "")
	}
	if len(ph) > 0 && strings.Contains(instr, "placeholders") {
		return cur
	}
	return t.apply(strings.TrimSpace(cur), instr, "Revised as asked")
}

// apply makes instructions visible in text: a shorter text for "shorter", a longer
// one for "more detail", and a closing note that quotes them. A revision asked for
// anything else adds a paragraph that puts the text in practice (revisedMark), so that
// the text itself changes: the engine keeps the note apart, and evaluates the text
// alone.
func (t writeTask) apply(text, instr, verb string) string {
	instr = trimEnd(oneLine(instr))
	if instr == "" {
		return text
	}
	switch {
	case wantsShorter(instr):
		text = shorten(text)
	case wantsLonger(instr):
		more := ""
		if t.content != nil {
			more = t.fill(t.content.More)
		}
		if more == "" {
			more = "**In more detail:** " + orDefault(sentence(t.description), "the points above, each with an owner and a date.")
		}
		text += "\n\n" + more
	case !strings.Contains(text, revisedMark):
		text += "\n\n" + revisedMark + " " + practice(instr)
	}
	if verb == "" {
		return text
	}
	return text + "\n\n_" + verb + ": " + instr + "._"
}

// asksRe reads what a change request asks the text to take in: "mention commuting
// parents" → "commuting parents".
var asksRe = regexp.MustCompile(`(?i)^(?:please\s+)?(?:mention|add|include|cover|talk about|say something about|explain|describe|address|name)\s+(.+)$`)

// practice is the sentence apply adds for instructions instr: what the request asked
// to take in, so that a note "Revised as asked: mention commuting parents" is true of
// the text; for the automatic revision ("meet “…”"), that the review's findings are
// answered; else owners and dates for the points above.
func practice(instr string) string {
	if m := asksRe.FindStringSubmatch(instr); m != nil {
		return "this also covers " + trimEnd(m[1]) + "."
	}
	if strings.HasPrefix(instr, "meet ") {
		// Not the criteria's words: a criterion may quote a template whose slots
		// ("[product]") would stay in the text as placeholders.
		return "each point above now answers what the review found missing."
	}
	return "each point above gets an owner and a date."
}

// revisedMark opens the paragraph apply adds to a revision.
const revisedMark = "**In practice:**"

// writeWithSearches writes the artifact and adds what its searches found, if
// they found anything.
func (t writeTask) writeWithSearches() string {
	text := t.write()
	if found := t.foundBlock(); found != "" {
		text += "\n\n" + found
	}
	return text
}

// foundBlock lists what the searches found, for a text that is not the blog's notes
// (the proposal's research, a custom artifact with tools): "" when they found
// nothing.
func (t writeTask) foundBlock() string {
	notes := t.resultNotes()
	if len(notes) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("**What the searches found** (to verify before use)")
	for _, n := range notes {
		fmt.Fprintf(&b, "\n- %s (%s)", sentence(n.Fact), n.URL)
	}
	return b.String()
}

// docsetSummary writes the report's summary.
func (t writeTask) docsetSummary() string {
	var s string
	if t.theme != nil {
		s = t.fill(t.theme.Summary)
	} else {
		title := "“" + orDefault(t.workflow, "The document") + "”"
		if t.topic != "" {
			title += " on “" + t.topic + "”"
		}
		var titles []string
		for _, id := range t.approvedOrder {
			titles = append(titles, t.approvedTitle[id])
		}
		switch len(titles) {
		case 0:
			s = title + " is complete. The attached document brings its parts together."
		default:
			s = fmt.Sprintf("%s is complete: its %d parts (%s) were proposed, reviewed and approved in this thread. The attached document brings them together as one text.",
				title, len(titles), strings.Join(titles, ", "))
		}
	}
	instr := quotedAfter(t.text, "The team's instructions:")
	if instr != "" && wantsShorter(instr) {
		return firstSentences(s, 1)
	}
	return t.apply(s, instr, "Written as asked")
}

// fillSlots replaces each template slot ph of text, such as "[product]", with a plain
// phrase ("the product"), as an editor asked to fill it without a name would.
func fillSlots(text string, ph []string) string {
	var pairs []string
	for _, p := range ph {
		pairs = append(pairs, p, "the "+strings.ToLower(strings.Trim(p, "[]")))
	}
	return strings.NewReplacer(pairs...).Replace(text)
}
