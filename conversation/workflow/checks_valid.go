package workflow

import (
	"strings"

	"gopkg.in/yaml.v3"
)

// checkFields are the fields of a criterion's check, in the order the schema
// documents them.
var checkFields = []string{"line", "heading", "words", "tolerance", "exclude"}

// decodeCheck reads a criterion's check mapping v; what names it in problems. It
// returns nil, with a problem, for anything but a mapping.
func decodeCheck(ps *problems, v *yaml.Node, what string) *Check {
	if v.Kind != yaml.MappingNode {
		ps.addf(v.Line, "%s: want a mapping with one of line, heading or words, like check: {line: \"Meta keywords:\"}", what)
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
		}
	})
	return c
}

// checkCheck reports what is wrong with c, the check of a criterion at cp (what names
// it): none or several of line, heading and words; an empty one; words naming an
// input d does not declare or one that is not a number; a tolerance outside (0, 1);
// tolerance or exclude without words; an empty exclude entry.
func (d *Definition) checkCheck(ps *problems, c *Check, cp position, what string) {
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
		key string
		val string
	}{{"line", c.Line}, {"heading", c.Heading}, {"words", c.Words}} {
		set := c.pos.has(k.key)
		if !set && k.val == "" {
			continue
		}
		kinds = append(kinds, k.key)
		if strings.TrimSpace(k.val) == "" && !c.pos.reported[k.key] {
			ps.addf(line(k.key), "%s: %s is empty", what, k.key)
		}
	}
	switch {
	case len(kinds) == 0:
		ps.addf(line(""), "%s: want one of line, heading or words, like check: {heading: Table of contents}", what)
	case len(kinds) > 1:
		ps.addf(line(kinds[1]), "%s: has %s: a check makes one test (line, heading or words); use one criterion per check", what, strings.Join(kinds, " and "))
	}
	if c.Words != "" {
		in, ok := d.Input(c.Words)
		switch {
		case !ok:
			reason := "names unknown input " + quote(c.Words)
			ids := make([]string, 0, len(d.Inputs))
			for _, in := range d.Inputs {
				ids = append(ids, in.ID)
			}
			if s := nearest(c.Words, ids); s != "" {
				reason += " (did you mean " + quote(s) + "?)"
			}
			ps.addf(line("words"), "%s: words %s", what, reason)
		case in.Type != InputNumber:
			ps.addf(line("words"), "%s: words names input %s, which is not a number (give it type: number)", what, quote(c.Words))
		}
	} else {
		for _, k := range []string{"tolerance", "exclude"} {
			if c.pos.has(k) || (k == "tolerance" && c.Tolerance != nil) || (k == "exclude" && len(c.Exclude) > 0) {
				ps.addf(line(k), "%s: %s is only for a words check", what, k)
			}
		}
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

// quote is s in double quotes, as problems name values.
func quote(s string) string { return `"` + s + `"` }
