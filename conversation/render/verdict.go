package render

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// grading writes what the checks and the judge said of an artifact, in a card's
// language, against the workflow's definition (its Judge): the pass line under an
// artifact, the evaluation and the verdict (docs/workflows.md, "Verdicts").
type grading struct {
	lang string
	def  *workflow.Definition
}

// grading returns the card's grading.
func (c Cards) grading() grading { return grading{lang: c.Lang, def: c.Def} }

// evaluation sums up an evaluation on one line ("✅ 4 of 4 criteria met"), then each
// failing criterion with its reason on a line of its own.
func (g grading) evaluation(a *workflow.Artifact, eval []workflow.CriterionResult) string {
	met := 0
	var failed []string
	for _, r := range eval {
		if r.Pass {
			met++
			continue
		}
		title := CriterionTitle(g.lang, a, r.ID)
		line := "❌ *" + title + "*"
		if reason := strings.TrimSpace(r.Reason); reason != "" {
			if restates(reason, title) {
				reason = Tr(g.lang, "evaluation.restated")
			}
			line += ": " + shorten(strings.Join(strings.Fields(reason), " "), 300)
		}
		failed = append(failed, line)
	}
	mark := "✅"
	if len(failed) > 0 {
		mark = "⚠️"
	}
	return strings.Join(append([]string{mark + " " + Tr(g.lang, "evaluation.met", met, len(eval))}, failed...), "\n")
}

// restates reports whether a criterion's reason only repeats its title (a title of
// three words or more, found in the reason whatever the case and quotes): such a
// reason tells the reader nothing the title does not, and a title like "Does not
// describe the solution" around "add a sentence that shows it" advises its opposite.
func restates(reason, title string) bool {
	norm := func(s string) string {
		return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsDigit(r)
		}), " ")
	}
	t := norm(title)
	return strings.Count(t, " ") >= 2 && strings.Contains(norm(reason), t)
}

// withPlaceholders returns eval with the placeholders criterion as met when other
// (the evaluation before or after an automatic revision) has it and eval does not:
// it is added only when it fails (CheckPlaceholders), so without this the two
// verdicts would count different criteria.
func withPlaceholders(eval, other []workflow.CriterionResult) []workflow.CriterionResult {
	has := func(e []workflow.CriterionResult) bool {
		for _, r := range e {
			if r.ID == conversation.CriterionPlaceholders {
				return true
			}
		}
		return false
	}
	if has(other) && !has(eval) {
		return append(slices.Clone(eval), workflow.CriterionResult{ID: conversation.CriterionPlaceholders, Pass: true})
	}
	return eval
}

// CriterionTitle is criterion id's title on an evaluation card: its description without
// a closing full stop, or, for the check every written artifact gets, its name in lang.
func CriterionTitle(lang string, a *workflow.Artifact, id string) string {
	for _, cr := range a.Criteria {
		if cr.ID == id {
			// A description is often a sentence; the card puts ":" and the reason
			// after it, so its closing full stop goes.
			return strings.TrimSuffix(strings.TrimSpace(cr.Description), ".")
		}
	}
	if id == conversation.CriterionPlaceholders {
		return Tr(lang, "evaluation.no_slots")
	}
	return id
}

// passLine is the context line of st's passes on artifact a's card: its options'
// self review, or its text's enhancement pass, then the tool calls its writes
// refused (refusedLines); "" when there is nothing to say.
func (g grading) passLine(a *workflow.Artifact, st *workflow.ArtifactState) string {
	lines := slices.DeleteFunc(append([]string{g.passes(a, st)}, g.refusedLines(st)...), func(s string) bool { return s == "" })
	return strings.Join(lines, "\n")
}

// refusedLines say which tool calls st's writes did not run, and why (docs/tools.md,
// "Tool policy"): one line per reason, the tools named in the order refused.
func (g grading) refusedLines(st *workflow.ArtifactState) []string {
	var lines []string
	for _, reason := range []string{conversation.ApprovalAfterUntrusted, conversation.ApprovalDestructive} {
		var tools []string
		for _, r := range st.Refused {
			if r.Reason == reason && !slices.Contains(tools, "`"+r.Tool+"`") {
				tools = append(tools, "`"+r.Tool+"`")
			}
		}
		if len(tools) == 0 {
			continue
		}
		key := "tool.refused_untrusted"
		if reason == conversation.ApprovalDestructive {
			key = "tool.refused_destructive"
		}
		lines = append(lines, "🛑 "+Tr(g.lang, key, strings.Join(tools, ", ")))
	}
	return lines
}

// passes is passLine's first part: the options' self review or the enhancement pass.
func (g grading) passes(a *workflow.Artifact, st *workflow.ArtifactState) string {
	if (st.Status == workflow.StatusOptionsGenerated || st.Status == workflow.StatusOptionSelected) && st.Reviewed {
		return "🔍 " + Tr(g.lang, "pass.reviewed")
	}
	if a.Enhance == nil {
		return ""
	}
	switch st.Enhancement {
	case workflow.EnhanceDone:
		return "✨ " + Tr(g.lang, "pass.enhanced")
	case workflow.EnhanceSkipped:
		return "⏭ " + Tr(g.lang, "pass.enhance_skipped")
	case workflow.EnhanceFailed:
		return "⚠️ " + Tr(g.lang, "pass.enhance_failed")
	}
	return ""
}

// CheckPlaceholders adds to eval the result of the placeholders criterion when text
// has a placeholder left: failing, with the placeholders as its reason, in lang.
func CheckPlaceholders(lang string, eval []workflow.CriterionResult, text string) []workflow.CriterionResult {
	ph := workflow.Placeholders(text)
	if len(ph) == 0 {
		return eval
	}
	return append(eval, workflow.CriterionResult{ID: conversation.CriterionPlaceholders, Pass: false, Reason: Tr(lang, "evaluation.slots_left", strings.Join(ph, ", "))})
}

// judged is an artifact's evaluation on its card: the evaluation line and failing
// criteria (evaluation), then the verdict; after an automatic revision, both
// verdicts, before → after.
func (g grading) judged(a *workflow.Artifact, st *workflow.ArtifactState) string {
	lines := []string{g.evaluation(a, withPlaceholders(st.Eval, st.PriorEval))}
	lines = append(lines, g.passedChecks(a, st.Eval)...)
	return strings.Join(append(lines, g.verdict(a, st)), "\n")
}

// passedChecks are the lines of the checks (workflow.Check) in eval that passed with
// a reason to show (a word count): "✅ *title*: reason"; failing ones are among the
// evaluation's failing criteria.
func (g grading) passedChecks(a *workflow.Artifact, eval []workflow.CriterionResult) []string {
	var out []string
	for _, r := range eval {
		if !r.Pass || strings.TrimSpace(r.Reason) == "" || !hasCheck(a, r.ID) {
			continue
		}
		out = append(out, "✅ *"+CriterionTitle(g.lang, a, r.ID)+"*: "+shorten(strings.Join(strings.Fields(r.Reason), " "), 300))
	}
	return out
}

// hasCheck reports whether criterion id of a has a check.
func hasCheck(a *workflow.Artifact, id string) bool {
	for _, cr := range a.Criteria {
		if cr.ID == id {
			return cr.Check != nil
		}
	}
	return false
}

// CheckResults are the criterion results of checks, their reasons in lang
// (checkReason).
func CheckResults(lang string, checks []workflow.CheckResult) []workflow.CriterionResult {
	out := make([]workflow.CriterionResult, len(checks))
	for i, c := range checks {
		out[i] = workflow.CriterionResult{ID: c.ID, Pass: c.Pass, Reason: checkReason(lang, c)}
	}
	return out
}

// checkReason words check result c in lang: why it failed ("No "Meta keywords:"
// line"); for a words check, the count against its target also when it passed
// ("1,480 words; the target is 1,500 ± 15% (1,275–1,725)"); "" for a line or heading
// that is there.
func checkReason(lang string, c workflow.CheckResult) string {
	switch {
	case c.Kind == workflow.CheckWords && c.Problem == workflow.CheckNoTarget && c.Value == "":
		return Tr(lang, "check.words_no_input", groupDigits(lang, c.Count), c.Want)
	case c.Kind == workflow.CheckWords && c.Problem == workflow.CheckNoTarget:
		return Tr(lang, "check.words_not_number", groupDigits(lang, c.Count), c.Want, c.Value)
	case c.Kind == workflow.CheckWords:
		target := strconv.FormatFloat(c.Target, 'f', -1, 64) // 2.5
		switch {
		case c.Target >= 1e15:
			target = strconv.FormatFloat(c.Target, 'g', -1, 64) // 1e+300, not its digits
		case c.Target == math.Trunc(c.Target):
			target = groupDigits(lang, int(c.Target))
		}
		return Tr(lang, "check.words", groupDigits(lang, c.Count), target, strconv.FormatFloat(c.Tolerance*100, 'f', -1, 64), groupDigits(lang, c.Min), groupDigits(lang, c.Max))
	case c.Kind == workflow.CheckLead || c.Kind == workflow.CheckSubsections || c.Kind == workflow.CheckBannedOpeners:
		return styleReason(lang, c)
	case c.Kind == workflow.CheckKeywords:
		return keywordsReason(lang, c)
	case c.Problem == workflow.CheckEmpty:
		return Tr(lang, "check.line_empty", c.Want)
	case c.Problem == workflow.CheckMissing && c.Kind == workflow.CheckLine:
		return Tr(lang, "check.line_missing", strings.TrimSpace(c.Want))
	case c.Problem == workflow.CheckMissing:
		return Tr(lang, "check.heading_missing", c.Want)
	}
	return ""
}

// maxSpots bounds the places a style check's reason names.
const maxSpots = 3

// styleReason words a lead, subsections or banned_openers result c in lang: each
// place that failed (at most maxSpots, then how many more), joined by "; "; a
// passing subsections check gives its bounds, the others "".
func styleReason(lang string, c workflow.CheckResult) string {
	if c.Pass {
		if c.Kind == workflow.CheckSubsections {
			return Tr(lang, "check.subs_ok", groupDigits(lang, c.Min), groupDigits(lang, c.Max))
		}
		return ""
	}
	var parts []string
	for i, s := range c.Spots {
		if i == maxSpots {
			parts = append(parts, Tr(lang, "check.more", len(c.Spots)-maxSpots))
			break
		}
		parts = append(parts, spotReason(lang, c, s))
	}
	return strings.Join(parts, "; ")
}

// spotReason words one place s where check c failed.
func spotReason(lang string, c workflow.CheckResult, s workflow.CheckSpot) string {
	switch s.Problem {
	case workflow.CheckNoOpening:
		return Tr(lang, "check.no_opening")
	case workflow.CheckLeadLength:
		return Tr(lang, "check.lead", s.Section, s.Count, c.Count)
	case workflow.CheckNoSubsections:
		return Tr(lang, "check.no_subsections", s.Section)
	case workflow.CheckOutOfRange:
		where := Tr(lang, "check.quoted", s.Subsection)
		if s.Section != "" {
			where = Tr(lang, "check.sub_in", s.Subsection, s.Section)
		}
		return Tr(lang, "check.sub_words", where, groupDigits(lang, s.Count), c.Want,
			strconv.FormatFloat(c.Tolerance*100, 'f', -1, 64), groupDigits(lang, c.Min), groupDigits(lang, c.Max))
	case workflow.CheckBanned:
		if s.Section == "" {
			return Tr(lang, "check.banned_text", s.Phrase)
		}
		return Tr(lang, "check.banned", s.Section, s.Phrase)
	}
	return ""
}

// keywordsReason words a keywords result c in lang: the keywords not used, quoted,
// as the source lists them; on a pass, how many were found.
func keywordsReason(lang string, c workflow.CheckResult) string {
	switch c.Problem {
	case "":
		return Tr(lang, "check.keywords_ok", c.Count, c.Want)
	case workflow.CheckNoKeywords:
		return Tr(lang, "check.no_keywords", c.Want)
	}
	quoted := make([]string, len(c.Missing))
	for i, k := range c.Missing {
		quoted[i] = Tr(lang, "check.quoted", k)
	}
	return Tr(lang, "check.keywords", c.Want, strings.Join(quoted, ", "))
}

// groupDigits writes whole number n with the thousands separator of lang: "1,500" in
// English, "1 500" (a no-break space) in Russian.
func groupDigits(lang string, n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	sep := Tr(lang, "check.thousands")
	var b strings.Builder
	for i, d := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteString(sep)
		}
		b.WriteRune(d)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// verdict is the verdict line of st's evaluation, in the card's language: "⚖️
// *Verdict:* ✅ pass", or "… ❌ fail (2 of 4 criteria met) → ✅ pass (4 of 4) after
// one automatic revision".
func (g grading) verdict(a *workflow.Artifact, st *workflow.ArtifactState) string {
	word := func(v workflow.Verdict) string {
		if v.Pass {
			return Tr(g.lang, "verdict.pass")
		}
		return Tr(g.lang, "verdict.fail")
	}
	after := g.def.Judge(a, withPlaceholders(st.Eval, st.PriorEval))
	line := word(after)
	if st.PriorEval != nil {
		before := g.def.Judge(a, withPlaceholders(st.PriorEval, st.Eval))
		line = Tr(g.lang, "verdict.revised", word(before), before.Met, before.Total, word(after), after.Met, after.Total)
	}
	if after.Pass && after.Met < after.Total {
		key := "verdict.why_pass"
		if after.Total-after.Met > 1 {
			key = "verdict.why_pass_many"
		}
		line += " — " + Tr(g.lang, key)
	}
	return "⚖️ *" + Tr(g.lang, "verdict.label") + ":* " + line
}
