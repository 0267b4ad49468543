package demo

import (
	"regexp"
	"strconv"
	"strings"
)

// Two task shapes of the workflow agent: the options' self-review (a second
// commit_artifact_options call that reviews the first options against the criteria)
// and a batch write (one commit_artifact_final_text for every item of a foreach
// artifact, one "## " section each).

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
	// batchRe is the first line of a batch write's items
	// (prompts/templates/artifact_write.tmpl).
	batchRe = regexp.MustCompile(`Write all (\d+) items in one text, one "## " section per item, titled exactly as below:`)
	// batchItemRe is an item line of a batch write.
	batchItemRe = regexp.MustCompile(`^[\s*_>-]*Item (\d+) of (\d+):[*_]*\s*(.+?)\s*$`)
)

// reviewedOptions revises the options listed after reviewMarker once: the same labels
// and titles, with texts that say explicitly what the criteria ask (the blog outline's
// working title, reader, angle and sections; for other artifacts, the criteria they
// were checked against). Options the list lacks are proposed as usual.
func (t *task) reviewedOptions() []optionArgs {
	_, after, _ := strings.Cut(t.text, reviewMarker)
	labels := t.optionLabels()
	fresh := t.options()
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
func (t *task) reviewOption(o option, criteria []criterion) string {
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

// firstWords returns the whole sentences of s that fit in n words (at least one).
func firstWords(s string, n int) string {
	var keep []string
	words := 0
	for _, sen := range splitSentences(s) {
		w := wordCount(sen)
		if len(keep) > 0 && words+w > n {
			break
		}
		keep = append(keep, sen)
		words += w
	}
	return strings.Join(keep, " ")
}

// readBatch reads the items of a batch write: the lines "Item <n> of <total>: <title>"
// after batchRe's line, each with the lines indented under it as its brief; nil when
// the task is no batch write.
func readBatch(text string) []item {
	loc := batchRe.FindStringIndex(text)
	if loc == nil {
		return nil
	}
	var out []item
	var brief []string
	flush := func() {
		if len(out) > 0 && len(brief) > 0 {
			out[len(out)-1].Brief = strings.TrimSpace(strings.Join(brief, "\n"))
		}
		brief = nil
	}
	for _, l := range strings.Split(text[loc[1]:], "\n") {
		if m := batchItemRe.FindStringSubmatch(l); m != nil {
			flush()
			n, _ := strconv.Atoi(m[1])
			total, _ := strconv.Atoi(m[2])
			out = append(out, item{N: n, Total: total, Title: m[3]})
			continue
		}
		indented := strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") || strings.HasPrefix(l, ">")
		switch {
		case len(out) > 0 && indented && strings.TrimSpace(l) != "":
			brief = append(brief, strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), ">")))
		case strings.TrimSpace(l) == "":
		default: // the brief ends; the items may go on after other lines
			flush()
		}
	}
	flush()
	return out
}

// batchText writes every item of a batch, each under "## " and its title exactly as
// listed, as the items would be written one by one (without the blog's demo failure:
// the batch succeeds as a whole).
func (t *task) batchText() string {
	parts := make([]string, len(t.batch))
	for i := range t.batch {
		c := *t
		it := t.batch[i]
		c.item, c.batch = &it, nil
		c.results = t.resultsFor(it.Title)
		var text string
		switch {
		case c.blog != blogNone:
			text = c.blogText(false)
		default:
			text = c.write()
			if found := c.foundBlock(); found != "" {
				text += "\n\n" + found
			}
		}
		parts[i] = "## " + it.Title + "\n\n" + strings.TrimSpace(text)
	}
	return strings.Join(parts, "\n\n")
}
