package demo

import (
	"fmt"
	"hash/fnv"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/threadwright/threadwright/internal/textcut"
)

// Reviews: the evaluation of a text against its criteria (commit_evaluation)
// and the options' self-review.

type resultArgs struct {
	ID     string `json:"id"`
	Pass   bool   `json:"pass"`
	Reason string `json:"reason"`
}

// reviewTask answers the evaluation task and the options' self-review.
type reviewTask struct{ *workflowTask }

// evaluate judges the text: a real check where a criterion states a word limit (and,
// for the blog, the checks of checkBlog); otherwise a pass, except that about two
// texts in five (by a hash of the artifact id and the text) fail one criterion, so
// that both outcomes can be seen. A text revised at the team's request (one with
// revisedMark or a longer one, see apply) passes, so a
// revision visibly fixes it. The blog's texts fail only real checks: most of its
// artifacts are written by a pipeline that nobody reviews.
func (t reviewTask) evaluate() []resultArgs {
	text := quotedAfter(t.text, "The text:")
	criteria := listedCriteria(t.text)
	if len(criteria) == 0 {
		for _, id := range enumOf(prop(itemsOf(prop(t.schema, "results")), "id")) {
			criteria = append(criteria, criterion{ID: id})
		}
	}
	h := fnv.New32a()
	h.Write([]byte(t.artifactID + "\x00" + text))
	sum := h.Sum32()
	failAt := -1
	if sum%5 < 2 && len(criteria) > 0 && !strings.Contains(text, revisedMark) && !strings.Contains(text, "**In more detail:**") && t.workflow != blogWorkflow {
		failAt = int(sum/5) % len(criteria)
	}
	out := make([]resultArgs, len(criteria))
	failed := false
	for i, c := range criteria {
		pass, reason := checkLimit(c.Description, text)
		if reason == "" && t.workflow == blogWorkflow {
			pass, reason = checkBlog(c.Description, text, t.blog, t.wordcount())
		}
		failed = failed || !pass
		out[i] = resultArgs{ID: c.ID, Pass: pass, Reason: reason}
	}
	for i, c := range criteria {
		switch {
		case out[i].Reason != "":
		case i == failAt && !failed:
			out[i].Pass = false
			out[i].Reason = missingReason(c)
		default:
			out[i].Pass = true
			out[i].Reason = "Met: " + quoteCriterion(c) + "."
		}
	}
	return out
}

var (
	wholeLimitRe    = regexp.MustCompile(`(?i)^is at most (\d+) words`)
	sentenceLimitRe = regexp.MustCompile(`(?i)sentence of at most (\d+) words`)
	// boldLeadRe matches the bold title a written choice artifact starts with.
	boldLeadRe = regexp.MustCompile(`^\*\*[^*\n]+\*\*\s*`)
)

// checkLimit checks a criterion that states a word limit on the whole text or on
// its first sentence. reason is "" for other criteria.
func checkLimit(desc, text string) (pass bool, reason string) {
	text = notesRe.ReplaceAllString(text, "")
	if m := wholeLimitRe.FindStringSubmatch(desc); m != nil {
		limit, _ := strconv.Atoi(m[1])
		n := len(strings.Fields(text))
		if n <= limit {
			return true, fmt.Sprintf("Met: %d words, within the limit of %d.", n, limit)
		}
		return false, fmt.Sprintf("Too long: %d words, over the limit of %d; cut %d.", n, limit, n-limit)
	}
	if m := sentenceLimitRe.FindStringSubmatch(desc); m != nil {
		limit, _ := strconv.Atoi(m[1])
		lead := firstSentences(boldLeadRe.ReplaceAllString(strings.TrimSpace(text), ""), 1)
		n := len(strings.Fields(lead))
		if n <= limit {
			return true, fmt.Sprintf("Met: the lead sentence has %d words (limit %d).", n, limit)
		}
		return false, fmt.Sprintf("The lead sentence has %d words, over the limit of %d.", n, limit)
	}
	return true, ""
}

// negativeRe matches a criterion that rules something out ("Does not describe the
// solution", "Avoids jargon").
var negativeRe = regexp.MustCompile(`(?i)^(?:does not|doesn't|do not|don't|avoids?|never|no|without)\b`)

// missingReason is why the demo fails criterion c, in the reader's terms and without
// repeating the criterion, which the card already shows as the title.
func missingReason(c criterion) string {
	if negativeRe.MatchString(strings.TrimSpace(c.Description)) {
		return "A passage of the text still does what this rules out; take it out or rephrase it."
	}
	return "No sentence of the text does this yet; one more sentence would."
}

func quoteCriterion(c criterion) string {
	if c.Description == "" {
		return c.ID
	}
	return "“" + trimEnd(textcut.Ellipsis(c.Description, 200, unicode.IsSpace)) + "”"
}

// reviewMarker opens the self-review's part of the options task
// (prompts/templates/artifact_options.tmpl).
const reviewMarker = "Review these options against the criteria below, then revise them once:"

var (
	// reviewOptionRe reads an option listed for review: "A. Title: text".
	reviewOptionRe = regexp.MustCompile(`^([A-Z0-9]{1,2})[.)] (.+?): (.*)$`)
	// reviewLineRe reads a line that may list an option: "A. …".
	reviewLineRe = regexp.MustCompile(`^([A-Z0-9]{1,2})[.)] (.+)$`)
	// reviewedRe matches the sentence a review adds, removed before another review.
	reviewedRe = regexp.MustCompile(` Reviewed against the criteria: [^.]*\.`)
)

// reviewedOptions revises the options listed after reviewMarker once: the same labels
// and titles, with texts that say explicitly what the criteria ask (the blog outline's
// working title, reader, angle and sections; for other artifacts, the criteria they
// were checked against). Options the list lacks are proposed as usual.
func (t reviewTask) reviewedOptions() []optionArgs {
	_, after, _ := strings.Cut(t.text, reviewMarker)
	o := optionsTask(t)
	labels := o.optionLabels()
	fresh := o.options()
	listed := map[string]option{}
	var order []string
	var criteria []criterion
	for _, l := range strings.Split(after, "\n") {
		l = strings.TrimSpace(l)
		if o, label, ok := listedOption(l, fresh); ok {
			if _, dup := listed[label]; !dup {
				order = append(order, label)
			}
			listed[label] = o
		} else if m := criterionRe.FindStringSubmatch(l); m != nil {
			criteria = append(criteria, criterion{ID: m[1], Description: strings.TrimSuffix(m[2], " (critical: must pass)")})
		}
	}
	out := make([]optionArgs, len(labels))
	for i, label := range labels {
		o, ok := listed[label]
		if !ok && i < len(order) {
			o, ok = listed[order[i]]
		}
		if !ok {
			out[i] = fresh[i]
			o = option{Title: fresh[i].Title, Text: fresh[i].Text}
		}
		out[i] = optionArgs{Label: label, Title: o.Title, Text: t.reviewOption(o, criteria)}
	}
	return out
}

// listedOption reads a line "A. Title: text" of the review: the title is a known
// option's when the line starts with it (a title may hold ": "), else what comes
// before the first ": ".
func listedOption(l string, known []optionArgs) (option, string, bool) {
	m := reviewLineRe.FindStringSubmatch(l)
	if m == nil {
		return option{}, "", false
	}
	for _, k := range known {
		if text, ok := strings.CutPrefix(m[2], k.Title+": "); ok {
			return option{Title: k.Title, Text: strings.TrimSpace(text)}, m[1], true
		}
	}
	if m := reviewOptionRe.FindStringSubmatch(l); m != nil {
		return option{Title: strings.TrimSpace(m[2]), Text: strings.TrimSpace(m[3])}, m[1], true
	}
	return option{}, "", false
}

// reviewOption revises one option against the criteria.
func (t reviewTask) reviewOption(o option, criteria []criterion) string {
	text := reviewedRe.ReplaceAllString(o.Text, "")
	asked := asAskedRe.FindString(text)
	text = strings.TrimSpace(asAskedRe.ReplaceAllString(text, ""))
	if t.blog == blogPlan {
		if a := angleByOption(t.angles(), o.Title); a != nil {
			titles := a.sectionTitles()
			return "Working title: “" + a.ArticleTitle + "”. Reader: " + sentence(a.Audience) +
				" Angle: " + sentence(a.Angle) + " Sections: " + strings.Join(titles, "; ") +
				". Each of the " + strconv.Itoa(len(titles)) + " sections covers its own ground and builds towards the angle." + asked
		}
	}
	if len(criteria) == 0 {
		return text + asked
	}
	ids := make([]string, len(criteria))
	for i, c := range criteria {
		ids[i] = c.ID
	}
	return firstWords(text, 70) + " Reviewed against the criteria: " + strings.Join(ids, ", ") + "." + asked
}
