package workflow

import (
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
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
	CheckLine    CheckKind = "line"
	CheckHeading CheckKind = "heading"
	CheckWords   CheckKind = "words"
)

// Kind returns which of Line, Heading and Words c sets (the first, in that order),
// or "" when none is.
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
	// CheckOutOfRange: the word count is outside the bounds.
	CheckOutOfRange CheckProblem = "out_of_range"
)

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
// a check, in criteria order; inputs are the run's input values (State.Inputs), for
// words checks. It is pure and linear in the size of text.
func RunChecks(a *Artifact, text string, inputs map[string]string) []CheckResult {
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
			r = wordsResult(r, c.Check, text, lines, inputs)
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
