package workflow

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/threadwright/threadwright/conversation/workflow/internal/prose"
)

// A criterion's deterministic check (Check, in definition.go; docs/workflows.md,
// "Verdicts"), run on a text without a model: RunChecks.

// DefaultTolerance is the tolerance of a words check that names none: the count may be
// 15% below or above the target (docs/workflows.md, "Verdicts").
const DefaultTolerance = 0.15

// CheckKind is which test a Check makes.
type CheckKind string

// The check kinds.
const (
	CheckLine          CheckKind = "line"
	CheckHeading       CheckKind = "heading"
	CheckWords         CheckKind = "words"
	CheckLead          CheckKind = "lead"
	CheckSubsections   CheckKind = "subsections"
	CheckBannedOpeners CheckKind = "banned_openers"
	CheckKeywords      CheckKind = "keywords"
)

// Kind returns which of Line, Heading, Words, Lead, Subsections, BannedOpeners and
// Keywords c sets (the first, in that order), or "" when none is.
func (c *Check) Kind() CheckKind {
	switch {
	case c == nil:
		return ""
	case c.Line != "":
		return CheckLine
	case c.Heading != "":
		return CheckHeading
	case c.Words != "":
		return CheckWords
	case c.Lead > 0:
		return CheckLead
	case len(c.Subsections) > 0:
		return CheckSubsections
	case len(c.BannedOpeners) > 0:
		return CheckBannedOpeners
	case c.Keywords != "":
		return CheckKeywords
	}
	return ""
}

// ToleranceOf returns c's tolerance: its own, else DefaultTolerance.
func (c *Check) ToleranceOf() float64 {
	if c != nil && c.Tolerance != nil {
		return *c.Tolerance
	}
	return DefaultTolerance
}

// CheckProblem says why a check failed.
type CheckProblem string

// The ways a check fails.
const (
	// CheckMissing: no such line, or no such heading.
	CheckMissing CheckProblem = "missing"
	// CheckEmpty: the line is there, with nothing after its start.
	CheckEmpty CheckProblem = "empty"
	// CheckNoTarget: the words input is empty, not a number or not above 0 (the
	// count is still given).
	CheckNoTarget CheckProblem = "no_target"
	// CheckOutOfRange: the word count (of the text, or of a subsection) is outside
	// the bounds.
	CheckOutOfRange CheckProblem = "out_of_range"
	// CheckNoOpening: the text does not start with a "## " heading (lead).
	CheckNoOpening CheckProblem = "no_opening"
	// CheckLeadLength: a section's lead-in has another number of sentences (lead).
	CheckLeadLength CheckProblem = "lead_length"
	// CheckNoSubsections: a "## " section has no "### " subsection (subsections).
	CheckNoSubsections CheckProblem = "no_subsections"
	// CheckBanned: a sentence opens with a banned phrase (banned_openers).
	CheckBanned CheckProblem = "banned"
	// CheckNoKeywords: the artifact a keywords check names has no text, or lists no
	// keywords (keywords; CheckMissing: some keywords are not in the text).
	CheckNoKeywords CheckProblem = "no_keywords"
)

// CheckSpot is one place where a lead, subsections or banned_openers check failed.
type CheckSpot struct {
	// Problem is what failed there: CheckNoOpening, CheckLeadLength,
	// CheckNoSubsections, CheckOutOfRange or CheckBanned.
	Problem CheckProblem
	// Section is the "## " section's title ("" before the first one); Subsection the
	// "### " subsection's (subsections' CheckOutOfRange only).
	Section, Subsection string
	// Count is the lead-in's sentences or the subsection's words.
	Count int
	// Phrase is the banned phrase a sentence opens with, as the check lists it.
	Phrase string
}

// CheckEnv is what checks read besides the text: the run's input values
// (State.Inputs), for words checks, and the texts of the other artifacts (artifact
// id → text, such as conversation.ArtifactRequest.Approved), for keywords checks.
// Workflow, when set, gives a keywords check's source its title (else its id).
type CheckEnv struct {
	Inputs    map[string]string
	Artifacts map[string]string
	Workflow  *Definition
}

// CheckResult is the result of one criterion's check: structured, so that the caller
// words the reason in the thread's language.
type CheckResult struct {
	// ID is the criterion's id; Kind the check's kind.
	ID   string
	Kind CheckKind
	// Pass is the result; Problem says why it failed ("" when it passed).
	Pass    bool
	Problem CheckProblem
	// Want is the line's start, the heading's title, or the words input's id.
	Want string
	// Words checks: Count is the body's word count; Value the input's value as
	// given; Target the number it holds; Tolerance the share applied; Min and Max
	// the inclusive bounds (whole words).
	Count     int
	Value     string
	Target    float64
	Tolerance float64
	Min, Max  int
	// Lead and subsections checks: Want is the number of sentences or the bounds
	// ("250–300"); Spots are the places that failed, in the text's order (Count of
	// the lead check is the sentences wanted; Min and Max of the subsections check
	// are its bounds with the tolerance applied). Banned openers: Spots too.
	Spots []CheckSpot
	// Keywords checks: Want is the artifact's title (its id without a Workflow);
	// Count the keywords it lists; Missing those not found, as the artifact words
	// them, in its order.
	Missing []string
}

// Checked reports whether a has at least one criterion with a check.
func (a *Artifact) Checked() bool {
	for _, c := range a.Criteria {
		if c.Check != nil {
			return true
		}
	}
	return false
}

// Unchecked returns a copy of a whose criteria are only those without a check: what
// a model evaluates. a itself is returned when none has a check.
func (a *Artifact) Unchecked() *Artifact {
	if !a.Checked() {
		return a
	}
	cp := *a
	cp.Criteria = nil
	for _, c := range a.Criteria {
		if c.Check == nil {
			cp.Criteria = append(cp.Criteria, c)
		}
	}
	return &cp
}

// RunChecks judges text by the checks of a's criteria, one result per criterion with
// a check, in criteria order; env gives the inputs and the other artifacts' texts. It
// is pure and linear in the size of text (and of the keywords' source).
func RunChecks(a *Artifact, text string, env CheckEnv) []CheckResult {
	if a == nil || !a.Checked() {
		return nil
	}
	lines := scanLines(text)
	var out []CheckResult
	for _, c := range a.Criteria {
		if c.Check == nil {
			continue
		}
		r := CheckResult{ID: c.ID, Kind: c.Check.Kind()}
		switch r.Kind {
		case CheckLine:
			r.Want = strings.TrimLeft(c.Check.Line, " \t")
			r.Problem = lineProblem(text, lines, r.Want)
		case CheckHeading:
			r.Want = cleanTitle(c.Check.Heading)
			r.Problem = CheckMissing
			for _, l := range lines {
				if l.level > 0 && strings.EqualFold(l.title, r.Want) {
					r.Problem = ""
					break
				}
			}
		case CheckWords:
			r = wordsResult(r, c.Check, text, lines, env.Inputs)
		case CheckLead, CheckSubsections, CheckBannedOpeners:
			r = styleResult(r, c.Check, text, lines)
		case CheckKeywords:
			r = keywordsResult(r, c.Check, text, lines, env)
		default:
			continue // a check without a kind does not validate
		}
		r.Pass = r.Problem == ""
		out = append(out, r)
	}
	return out
}

// lineProblem is the result of a line check for start: "" when a line (outside
// fenced code), less its indentation, starts with it, with text after it. Emphasis
// marks ("*", "_") in the line are skipped where start has none, so that a label the
// model emphasised ("**Meta keywords:**", "**Meta keywords**:") still matches.
func lineProblem(text string, lines []mdLine, start string) CheckProblem {
	problem := CheckMissing
	for _, l := range lines {
		if l.fenced {
			continue
		}
		rest, ok := cutPrefixLoose(strings.TrimLeft(text[l.start:l.end], " \t"), start)
		if !ok {
			continue
		}
		if strings.TrimSpace(strings.TrimLeft(rest, "*_ \t")) != "" {
			return ""
		}
		problem = CheckEmpty
	}
	return problem
}

// cutPrefixLoose is strings.CutPrefix, ignoring case and the emphasis marks ("*",
// "_") of s where prefix has no such mark.
func cutPrefixLoose(s, prefix string) (string, bool) {
	i := 0
	for _, p := range prefix {
		for i < len(s) && (s[i] == '*' || s[i] == '_') && p != '*' && p != '_' {
			i++
		}
		if i >= len(s) {
			return s, false
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r != p && !strings.EqualFold(string(r), string(p)) {
			return s, false
		}
		i += size
	}
	return s[i:], true
}

// wordsResult completes r, a words check c of text.
func wordsResult(r CheckResult, c *Check, text string, lines []mdLine, inputs map[string]string) CheckResult {
	r.Want, r.Value, r.Tolerance = c.Words, strings.TrimSpace(inputs[c.Words]), c.ToleranceOf()
	r.Count = bodyWords(text, lines, c.Exclude)
	target, ok := parseNumber(r.Value)
	if !ok || target <= 0 {
		r.Problem = CheckNoTarget
		return r
	}
	r.Target = target
	r.Min = wholeWords(math.Ceil(target*(1-r.Tolerance) - 1e-9))
	r.Max = wholeWords(math.Floor(target*(1+r.Tolerance) + 1e-9))
	if r.Count < r.Min || r.Count > r.Max {
		r.Problem = CheckOutOfRange
	}
	return r
}

// maxWords bounds a words check's bounds: no text has more words, and a bound
// converted to int beyond int's range would be meaningless.
const maxWords = math.MaxInt32

// wholeWords is bound f, a whole number, as an int between 0 and maxWords.
func wholeWords(f float64) int {
	return int(max(0, min(f, maxWords)))
}

// parseNumber reads a number input's value as people type it ("1500", "1 500",
// "1,500", "2.5").
func parseNumber(s string) (float64, bool) {
	s = strings.NewReplacer(" ", "", "\u00a0", "", "\u202f", "", ",", "", "_", "").Replace(s)
	if s == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// bodyWords counts the words of text's body: from its first "## " heading (the whole
// text without one), less the sections (headings of level 1 or 2) titled as an entry
// of exclude. A word is a run of non-space characters with a letter or digit in it,
// so Markdown marks ("##", "-", "|") are not words.
func bodyWords(text string, lines []mdLine, exclude []string) int {
	first := -1
	for i, l := range lines {
		if l.level == 2 {
			first = i
			break
		}
	}
	if first < 0 {
		return countWords(text)
	}
	n, skip := 0, false
	for _, l := range lines[first:] {
		if l.level == 1 || l.level == 2 {
			skip = false
			for _, e := range exclude {
				if strings.EqualFold(l.title, cleanTitle(e)) {
					skip = true
					break
				}
			}
		}
		if !skip {
			n += countWords(text[l.start:l.end])
		}
	}
	return n
}

// countWords counts the words of s (see bodyWords), in one pass without allocating.
func countWords(s string) int {
	n, word := 0, false // word: the current run of non-space has a letter or digit
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			word = false
		case !word && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			word = true
			n++
		}
	}
	return n
}

// listStartRE matches the marker of a list entry or a quote that starts a line.
var listStartRE = regexp.MustCompile(`^(?:[-*+>]|\d{1,9}[.)])\s+`)

// paragraph is a paragraph of a text, as the style checks read it.
type paragraph struct {
	section int    // index of its "## " section, -1 before the first
	lead    bool   // before the section's first heading of level 3 or more
	text    string // its lines joined by spaces, without a list or quote marker
}

// paragraphsOf returns the titles of text's "## " sections and its paragraphs: runs
// of lines outside fenced code, ended by a blank line, a heading or a line starting a
// list entry or a quote.
func paragraphsOf(text string, lines []mdLine) (titles []string, paras []paragraph) {
	sec, lead := -1, true
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			paras = append(paras, paragraph{section: sec, lead: lead, text: strings.Join(cur, " ")})
			cur = nil
		}
	}
	for _, l := range lines {
		line := strings.TrimSpace(text[l.start:l.end])
		switch {
		case l.fenced || line == "" || l.level == 1:
			flush()
			continue
		case l.level == 2:
			flush()
			titles = append(titles, l.title)
			sec, lead = len(titles)-1, true
			continue
		case l.level > 2:
			flush()
			lead = false
			continue
		}
		if m := listStartRE.FindString(line); m != "" {
			flush()
			line = line[len(m):]
		}
		cur = append(cur, line)
	}
	flush()
	return titles, paras
}

// styleResult completes r, a lead, subsections or banned_openers check c of text. A
// section whose text is a failed item's (noResult, ItemText) is not held to the
// lead or subsections: its failure is shown already.
func styleResult(r CheckResult, c *Check, text string, lines []mdLine) CheckResult {
	titles, paras := paragraphsOf(text, lines)
	title := func(i int) string {
		if i < 0 {
			return ""
		}
		return titles[i]
	}
	switch r.Kind {
	case CheckLead:
		r.Want, r.Count = strconv.Itoa(c.Lead), c.Lead
		if !opensWithSection(text, lines) {
			r.Spots = append(r.Spots, CheckSpot{Problem: CheckNoOpening})
		}
		counts := make([]int, len(titles))
		failed := make([]bool, len(titles))
		for _, p := range paras {
			if p.section >= 0 && p.lead {
				failed[p.section] = failed[p.section] || counts[p.section] == 0 && strings.HasPrefix(p.text, noResult)
				counts[p.section] += len(prose.Sentences(p.text))
			}
		}
		for i, n := range counts {
			if n != c.Lead && !failed[i] {
				r.Spots = append(r.Spots, CheckSpot{Problem: CheckLeadLength, Section: titles[i], Count: n})
			}
		}
	case CheckSubsections:
		r = subsectionsResult(r, c, text, lines)
	case CheckBannedOpeners:
		for _, p := range paras {
			for _, s := range prose.Sentences(p.text) {
				if phrase, ok := prose.Opener(s, c.BannedOpeners); ok {
					r.Spots = append(r.Spots, CheckSpot{Problem: CheckBanned, Section: title(p.section), Phrase: phrase})
				}
			}
		}
	}
	if len(r.Spots) > 0 {
		r.Problem = r.Spots[0].Problem
	}
	return r
}

// opensWithSection reports whether the first line of text (of lines) with anything
// on it is a "## " heading.
func opensWithSection(text string, lines []mdLine) bool {
	for _, l := range lines {
		if strings.TrimSpace(text[l.start:l.end]) != "" {
			return l.level == 2
		}
	}
	return false
}

// subsectionsResult completes r, a subsections check c of text: every "## " section
// (the whole text when it has none) but a failed item's (noResult) has a "### "
// subsection, and every subsection's
// words (countWords of its lines, without its heading, up to the next heading of
// level 3 or less) are within the bounds.
func subsectionsResult(r CheckResult, c *Check, text string, lines []mdLine) CheckResult {
	least, most := c.Subsections[0], c.Subsections[len(c.Subsections)-1]
	r.Want, r.Tolerance = strconv.Itoa(least)+"–"+strconv.Itoa(most), c.ToleranceOf()
	r.Min = wholeWords(math.Ceil(float64(least)*(1-r.Tolerance) - 1e-9))
	r.Max = wholeWords(math.Floor(float64(most)*(1+r.Tolerance) + 1e-9))
	section, inSection, subs := "", true, 0
	for _, l := range lines {
		if l.level == 2 {
			inSection = false
			break
		}
	}
	sub, words, inSub, opened := "", 0, false, false // opened: the section's text began
	failed := false                                  // the section is a failed item's (noResult)
	closeSub := func() {
		if inSub && (words < r.Min || words > r.Max) {
			r.Spots = append(r.Spots, CheckSpot{Problem: CheckOutOfRange, Section: section, Subsection: sub, Count: words})
		}
		inSub = false
	}
	closeSection := func() {
		closeSub()
		if inSection && subs == 0 && !failed {
			r.Spots = append(r.Spots, CheckSpot{Problem: CheckNoSubsections, Section: section})
		}
	}
	for _, l := range lines {
		switch {
		case l.level == 1 || l.level == 2:
			closeSection()
			section, inSection, subs, opened, failed = l.title, l.level == 2, 0, false, false
		case !opened && l.level == 0 && strings.TrimSpace(text[l.start:l.end]) != "":
			opened, failed = true, strings.HasPrefix(strings.TrimSpace(text[l.start:l.end]), noResult)
			if inSub {
				words += countWords(text[l.start:l.end])
			}
		case l.level == 3:
			closeSub()
			if inSection {
				sub, words, inSub = l.title, 0, true
				subs++
			}
		case inSub && l.level == 0:
			words += countWords(text[l.start:l.end])
		}
	}
	closeSection()
	return r
}

// keywordsResult completes r, a keywords check c of text: every keyword of the
// artifact c names (keywordsOf) occurs in text's body (bodyStart).
func keywordsResult(r CheckResult, c *Check, text string, lines []mdLine, env CheckEnv) CheckResult {
	r.Want = c.Keywords
	if env.Workflow != nil {
		if a, ok := env.Workflow.Artifact(c.Keywords); ok && a.Title != "" {
			r.Want = a.Title
		}
	}
	keywords := keywordsOf(env.Artifacts[c.Keywords])
	r.Count = len(keywords)
	if len(keywords) == 0 {
		r.Problem = CheckNoKeywords
		return r
	}
	words := prose.Words(text[bodyStart(lines):])
	for _, k := range keywords {
		if !prose.Contains(words, k) {
			r.Missing = append(r.Missing, k)
		}
	}
	if len(r.Missing) > 0 {
		r.Problem = CheckMissing
	}
	return r
}

// bodyStart is the offset of the body of the text of lines: its first "## " heading,
// or 0 when it has none (see bodyWords).
func bodyStart(lines []mdLine) int {
	for _, l := range lines {
		if l.level == 2 {
			return l.start
		}
	}
	return 0
}

// keywordsOf reads the keywords of text (prose.List): the lines of its section under
// a heading titled "Keywords", "Key words" or "Ключевые слова" (prose.KeywordsLabel:
// "## Keywords (4–8)" too; up to the next heading of the same level or above), else
// the rest of its first line starting with such a label and ":" ("Keywords:");
// nil when it has neither.
func keywordsOf(text string) []string {
	lines := scanLines(text)
	for i, l := range lines {
		if _, ok := prose.KeywordsLabel(l.title); l.level == 0 || !ok {
			continue
		}
		end := len(text)
		for _, m := range lines[i+1:] {
			if m.level > 0 && m.level <= l.level {
				end = m.start
				break
			}
		}
		return prose.List(text[l.next:end])
	}
	for _, l := range lines {
		if l.fenced {
			continue
		}
		if rest, ok := prose.KeywordsLabel(text[l.start:l.end]); ok && strings.HasPrefix(rest, ":") {
			return prose.List(strings.TrimLeft(rest[1:], "*_ \t"))
		}
	}
	return nil
}
