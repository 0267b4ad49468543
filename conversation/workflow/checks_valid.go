package workflow

import (
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// checkFields are the fields of a criterion's check, in the order the schema
// documents them.
var checkFields = []string{"line", "heading", "words", "tolerance", "exclude", "lead", "subsections", "banned_openers", "keywords"}

// checkKinds are the fields that make a check's test, in Kind's order.
var checkKinds = "line, heading, words, lead, subsections, banned_openers or keywords"

// decodeCheck reads a criterion's check mapping v; what names it in problems. It
// returns nil, with a problem, for anything but a mapping.
func decodeCheck(ps *problems, v *yaml.Node, what string) *Check {
	if v.Kind != yaml.MappingNode {
		ps.addf(v.Line, "%s: want a mapping with one of %s, like check: {line: \"Meta keywords:\"}", what, checkKinds)
		return nil
	}
	c := &Check{}
	c.pos = fields(ps, v, what, checkFields, func(key string, v *yaml.Node) {
		switch key {
		case "line":
			// Not trimmed: "# " (a title line) differs from "#".
			if v.Kind != yaml.ScalarNode || v.Tag == "!!null" {
				ps.addf(v.Line, "%s: line: want text, got %s", what, describe(v))
				return
			}
			c.Line = strings.TrimLeft(v.Value, " \t")
		case "heading":
			c.Heading = str(ps, v, what+": heading")
		case "words":
			c.Words = str(ps, v, what+": words")
		case "tolerance":
			var f float64
			if v.Kind != yaml.ScalarNode || v.Decode(&f) != nil {
				ps.addf(v.Line, "%s: tolerance: want a number between 0 and 1, like 0.15, got %s", what, describe(v))
				return
			}
			c.Tolerance = &f
		case "exclude":
			c.Exclude, c.excludes = strList(ps, v, what+": exclude", "a list of section titles, like [References]")
		case "lead":
			if v.Kind != yaml.ScalarNode || v.Decode(&c.Lead) != nil || c.Lead <= 0 {
				ps.addf(v.Line, "%s: lead: want the number of sentences before the first subsection, a whole number above 0, like 2, got %s", what, describe(v))
				c.Lead = 1 // set: reported, not "none of the kinds"
			}
		case "subsections":
			if v.Kind != yaml.SequenceNode || v.Decode(&c.Subsections) != nil || len(c.Subsections) != 2 ||
				c.Subsections[0] <= 0 || c.Subsections[1] < c.Subsections[0] {
				ps.addf(v.Line, "%s: subsections: want the least and the most words of a subsection, two whole numbers above 0, like [250, 300], got %s", what, describe(v))
				c.Subsections = []int{1, 1}
			}
		case "banned_openers":
			c.BannedOpeners, c.openers = strList(ps, v, what+": banned_openers", `a list of phrases, like ["In conclusion", "In summary"]`)
		case "keywords":
			c.Keywords = str(ps, v, what+": keywords")
		}
	})
	return c
}

// checkCheck reports what is wrong with c, the check of a criterion of artifact a at
// cp (what names it): none or several of the kinds (checkKinds); an empty one; words
// naming an input d does not declare or one that is not a number; keywords naming an
// artifact that is not one of a's dependencies; a tolerance outside (0, 1);
// tolerance or exclude where they do not apply; an empty exclude or banned_openers
// entry.
func (d checking) checkCheck(ps *problems, a *Artifact, c *Check, cp position, what string) {
	if c == nil {
		return
	}
	what += ": check"
	line := func(key string) int {
		if l, ok := c.pos.keys[key]; ok {
			return l
		}
		if c.pos.line != 0 {
			return c.pos.line
		}
		return cp.at("check")
	}
	var kinds []string
	for _, k := range []struct {
		key   string
		val   string
		other bool // set, for a kind that is no text
	}{{"line", c.Line, false}, {"heading", c.Heading, false}, {"words", c.Words, false},
		{"lead", "", c.Lead != 0}, {"subsections", "", len(c.Subsections) > 0},
		{"banned_openers", "", len(c.BannedOpeners) > 0}, {"keywords", c.Keywords, false}} {
		set := c.pos.has(k.key)
		if !set && k.val == "" && !k.other {
			continue
		}
		kinds = append(kinds, k.key)
		if strings.TrimSpace(k.val) == "" && !k.other && !c.pos.reported[k.key] {
			ps.addf(line(k.key), "%s: %s is empty", what, k.key)
		}
	}
	switch {
	case len(kinds) == 0:
		ps.addf(line(""), "%s: want one of %s, like check: {heading: Table of contents}", what, checkKinds)
	case len(kinds) > 1:
		ps.addf(line(kinds[1]), "%s: has %s: a check makes one test; use one criterion per check", what, strings.Join(kinds, " and "))
	}
	if c.Keywords != "" && !slices.Contains(a.DependsOn, c.Keywords) {
		ps.addf(line("keywords"), "%s: keywords names %s, which is not in depends_on of %s: a keywords check reads the keywords of an approved dependency, like keywords: brief", what, quote(c.Keywords), quote(a.ID))
	}
	for j, e := range c.BannedOpeners {
		if strings.TrimSpace(e) == "" && !c.pos.reported["banned_openers"] {
			l := line("banned_openers")
			if j < len(c.openers) {
				l = c.openers[j]
			}
			ps.addf(l, "%s: banned_openers has an empty entry", what)
		}
	}
	if c.Words != "" {
		d.checkWordsInput(ps, c.Words, line("words"), what)
	} else if c.pos.has("exclude") || len(c.Exclude) > 0 {
		ps.addf(line("exclude"), "%s: exclude is only for a words check", what)
	}
	if c.Words == "" && len(c.Subsections) == 0 && (c.pos.has("tolerance") || c.Tolerance != nil) {
		ps.addf(line("tolerance"), "%s: tolerance is only for a words or subsections check", what)
	}
	if t := c.Tolerance; t != nil && (*t <= 0 || *t >= 1) {
		ps.addf(line("tolerance"), "%s: tolerance must be more than 0 and less than 1 (the share the word count may differ by, like 0.15), got %g", what, *t)
	}
	for j, e := range c.Exclude {
		if strings.TrimSpace(e) == "" {
			l := line("exclude")
			if j < len(c.excludes) {
				l = c.excludes[j]
			}
			ps.addf(l, "%s: exclude has an empty entry", what)
		}
	}
}

// checkWordsInput reports a words check's input id, at line, that d does not declare
// or that is not a number; what names the check.
func (d checking) checkWordsInput(ps *problems, id string, line int, what string) {
	in, ok := d.Input(id)
	switch {
	case !ok:
		reason := "names unknown input " + quote(id)
		ids := make([]string, 0, len(d.Inputs))
		for _, in := range d.Inputs {
			ids = append(ids, in.ID)
		}
		if s := nearest(id, ids); s != "" {
			reason += " (did you mean " + quote(s) + "?)"
		}
		ps.addf(line, "%s: words %s", what, reason)
	case in.Type != InputNumber:
		ps.addf(line, "%s: words names input %s, which is not a number (give it type: number)", what, quote(id))
	}
}

// quote is s in double quotes, as problems name values.
func quote(s string) string { return `"` + s + `"` }
