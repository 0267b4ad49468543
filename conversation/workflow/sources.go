package workflow

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// The sources phase (docs/workflows.md, "Pipelines"): an auto artifact with fetch is not
// written by a model; the pipeline fetches the http(s) URLs of its fetch dependency's
// text (URLs) and keeps the readable text of each page.

// MaxFetchURLs bounds the URLs fetched for one item of a fetch artifact.
const MaxFetchURLs = 10

// MaxSourceChars bounds the readable text kept of one fetched page, in runes.
const MaxSourceChars = 6000

// MaxSourceItemChars bounds the readable text kept of one item's pages together, in
// runes: each of n pages keeps at most min(MaxSourceChars, MaxSourceItemChars/n)
// (SourceChars), so a sources artifact of MaxItems items stays within MaxItems ×
// MaxSourceItemChars runes of the checkpoint.
const MaxSourceItemChars = 24000

// SourceChars is how many runes of readable text each of n pages of one item keeps.
func SourceChars(n int) int {
	if n <= 0 {
		return MaxSourceChars
	}
	return min(MaxSourceChars, MaxSourceItemChars/n)
}

// urlRE matches an http(s) URL in text: it stops at white space, quotes, angle
// brackets, square brackets and braces, and "|" (a Slack link's label). Parentheses
// are matched and trimmed after (trimURL).
var urlRE = regexp.MustCompile(`(?i)\bhttps?://[^\s<>"'\[\]{}|\x60]+`)

// URLs returns the http(s) URLs of text, in order of first appearance, without
// repeats (URLs that differ only by their "#fragment" name one page: the first is
// kept) and without trailing punctuation ("https://a.example/x." gives
// "https://a.example/x") or a closing parenthesis that is not the URL's own (a
// Markdown link's end: "[x](https://a.example/x)"; "https://a.example/Go_(lang)"
// keeps its own), at most max of them (max ≤ 0: none).
func URLs(text string, max int) []string {
	var out, pages []string
	for rest := text; len(out) < max; {
		// One match at a time: a text of many URLs is read only as far as the max-th.
		loc := urlRE.FindStringIndex(rest)
		if loc == nil {
			break
		}
		m := rest[loc[0]:loc[1]]
		rest = rest[loc[1]:]
		u := trimURL(m)
		page, _, _ := strings.Cut(u, "#") // the page fetched: the fragment is not sent
		if len(u) <= len("https://") || slices.Contains(pages, page) {
			continue
		}
		out, pages = append(out, u), append(pages, page)
	}
	return out
}

// trimURL takes off the end of u, a urlRE match, the punctuation that ends the
// sentence around it and the closing parentheses it does not open, and what follows
// the first of those ("https://a.example/x)." gives "https://a.example/x").
func trimURL(u string) string {
	depth := 0
	for i := 0; i < len(u); i++ {
		switch u[i] {
		case '(':
			depth++
		case ')':
			if depth == 0 {
				u = u[:i]
			}
			depth--
		}
	}
	for {
		t := strings.TrimSuffix(strings.TrimRight(u, ".,;:!?*_~"), "(")
		if t == u {
			return u
		}
		u = t
	}
}

// checkSources checks a's fetch and research_strategy: fetch (auto only) names one of
// a's depends_on, and a fetch artifact has no retries, tools, editor, model, prompt,
// prefer_model, enhance, criteria or research_strategy; research_strategy (auto only) is batch or individual, and
// batch needs foreach. index maps the known ids to their artifact, ids lists them for
// suggestions.
func (d checking) checkSources(ps *problems, ap artifactPosition, a Artifact, index map[string]int, ids []string) {
	what := fmt.Sprintf("artifact %q", a.ID)
	validMode := a.Mode == ModeChoice || a.Mode == ModeDraft || a.Mode == ModeAuto
	if (a.ResearchStrategy != "" || ap.has("research_strategy")) && ap.ok("research_strategy") {
		line := ap.at("research_strategy")
		switch {
		case a.ResearchStrategy != StrategyBatch && a.ResearchStrategy != StrategyIndividual:
			ps.addf(line, "%s: research_strategy %q is invalid: use %s or %s", what, a.ResearchStrategy, StrategyBatch, StrategyIndividual)
		case validMode && a.Mode != ModeAuto:
			ps.addf(line, "%s: research_strategy needs mode: %s (mode is %s)", what, ModeAuto, a.Mode)
		case a.Fetch != "":
			ps.addf(line, "%s: research_strategy does not apply to a fetch artifact: no model writes it", what)
		case a.ResearchStrategy == StrategyBatch && a.Foreach == "":
			ps.addf(line, "%s: research_strategy: %s needs foreach: it writes every item of the foreach artifact in one text", what, StrategyBatch)
		}
	}
	if (a.Fetch == "" && !ap.has("fetch")) || !ap.ok("fetch") {
		return
	}
	line := ap.at("fetch")
	_, known := index[a.Fetch]
	switch {
	case a.Fetch == "":
		ps.addf(line, "%s: fetch is empty: name the dependency whose URLs are fetched, like fetch: research", what)
	case validMode && a.Mode != ModeAuto:
		ps.addf(line, "%s: fetch needs mode: %s (mode is %s)", what, ModeAuto, a.Mode)
	case a.Fetch == a.ID:
		ps.addf(line, "%s: fetch names the artifact itself: name the dependency whose URLs are fetched", what)
	case !known:
		reason := fmt.Sprintf("%s: fetch names unknown artifact %q", what, a.Fetch)
		if s := nearest(a.Fetch, ids); s != "" {
			reason += fmt.Sprintf(" (did you mean %q?)", s)
		}
		ps.addf(line, "%s", reason)
	case !slices.Contains(a.DependsOn, a.Fetch):
		ps.addf(line, "%s: fetch: %q is not a dependency of %q: add it to depends_on", what, a.Fetch, a.ID)
	}
	for _, f := range []struct {
		key string
		set bool
	}{
		{"retries", a.Retries != 0}, {"tools", len(a.Tools) > 0}, {"editor", a.Editor != nil},
		{"model", a.Model != ""}, {"prefer_model", a.PreferModel != ""}, {"prompt", a.Prompt != ""}, {"enhance", a.Enhance != nil},
		// Criteria would send every fetched page to the evaluator (up to MaxItems ×
		// MaxSourceItemChars runes) to judge what no model wrote.
		{"criteria", len(a.Criteria) > 0},
	} {
		if (f.set || ap.has(f.key)) && ap.ok(f.key) {
			ps.addf(ap.at(f.key), "%s: %s does not apply to a fetch artifact: no model writes it (remove %s or fetch)", what, f.key, f.key)
		}
	}
}
