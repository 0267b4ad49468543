package demo

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/threadwright/threadwright/conversation/workflow"
	"github.com/threadwright/threadwright/internal/textcut"
)

// The blog's real checks: the criteria of blog.yaml that a text can be
// measured against (sections, words, lines, references).

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
			return true, "Met: the line “" + textcut.Ellipsis(strings.TrimSpace(l), 80, unicode.IsSpace) + "”."
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
